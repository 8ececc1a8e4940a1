/**
 * The idempotency store in Redis (`redisIdempotencyStore`, from
 * `toolctx/helpers`), for servers with several replicas, on the core's
 * rules (`core().idem*`): its keys, entries, commands (`SET key value NX PX
 * lease` to claim, `GET key` to read what holds it, `SET key value PX ttl`
 * for the result, the core's compare-and-delete script to release) and the
 * meaning of every reply, shared with the Python package and toolctx-tower,
 * so a retry that lands on a server in another language is replayed.
 */
import { core } from './core-functions.js';
import { decodeEntry, encodeEntry, idempotencyDefaults, type IdempotencyStore } from './idempotency.js';
import { replyParts, sender, type RedisCommandClient, type RedisSend } from './redis.js';

export interface RedisIdempotencyStoreOptions {
  /** Prefixed to every store key. Default the core's, `"toolctx:idem:"`. */
  prefix?: string;
  /**
   * How long a command may wait for its reply, in milliseconds, before it
   * fails (the call then fails, never runs unguarded). Default (and 0) the
   * core's store timeout, 500; the core rounds it to whole milliseconds and
   * refuses anything outside 1 to 60,000 (`limit_out_of_range`, thrown here).
   */
  timeoutMs?: number;
}

export type RedisIdempotencyCommand = 'claim' | 'read' | 'complete' | 'release';

/** What a client's reply (as `replyParts` names it) means as the answer to `command`: the core's reading. */
export function redisReplyMeaning(command: RedisIdempotencyCommand, reply: unknown): { means: string; held?: Uint8Array } {
  const [kind, value] = replyParts(reply);
  const means = core().idemRedisMeaning(command, kind, value);
  return means === 'held' ? { means, held: value } : { means };
}

/** The core's arguments of a store command. */
export function redisArgs(command: RedisIdempotencyCommand, key: string, entry: string, ms: number): string[] {
  return JSON.parse(core().idemRedisArgs(command, key, entry, ms)) as string[];
}

export function redisIdempotencyStore(client: RedisCommandClient | RedisSend, options: RedisIdempotencyStoreOptions = {}): IdempotencyStore {
  const defaults = idempotencyDefaults();
  const send = sender(client, options.timeoutMs, core().redisTimeoutMs);
  const prefix = options.prefix ?? defaults.keyPrefix;
  const ask = async (command: RedisIdempotencyCommand, args: string[], expected: string[]): Promise<{ means: string; held?: Uint8Array }> => {
    // A timeout or a lost connection throws: the store failed.
    const answer = redisReplyMeaning(command, await send(args));
    if (!expected.includes(answer.means)) throw new Error(`toolctx: redis answered ${command} with a reply that means ${answer.means}`);
    return answer;
  };
  return {
    async claim(key, entry, leaseMs) {
      const k = core().idemRedisKey(prefix, key);
      const value = encodeEntry(entry);
      // The held value can expire between the SET and the GET: try again.
      for (let round = 0; round < defaults.claimRounds; round++) {
        const claimed = await ask('claim', redisArgs('claim', k, value, leaseMs), ['claimed', 'taken']);
        if (claimed.means === 'claimed') return null;
        const read = await ask('read', redisArgs('read', k, '', 0), ['held', 'gone']);
        if (read.held !== undefined) return decodeEntry(read.held);
      }
      throw new Error('toolctx: could not claim or read the key');
    },
    async complete(key, entry, ttlMs) {
      await ask('complete', redisArgs('complete', core().idemRedisKey(prefix, key), encodeEntry(entry), ttlMs), ['stored']);
    },
    async release(key, entry) {
      await ask('release', redisArgs('release', core().idemRedisKey(prefix, key), encodeEntry(entry), 0), ['released', 'not_held']);
    },
  };
}
