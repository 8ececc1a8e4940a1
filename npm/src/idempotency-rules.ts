/**
 * The idempotency helper's rules as the core states them (CONTRACT §5), for
 * a custom store or another client that must agree with every toolctx
 * server on one store: keys, entries, the decision on a held entry, the
 * wait, the refusals, the Redis commands and what each reply means.
 * `idempotent` and `redisIdempotencyStore` use exactly these.
 */
import { core } from './core-functions.js';
import { redisArgs, redisReplyMeaning } from './idempotency-redis.js';
import { decodeEntry, type StoredEntry } from './idempotency.js';

export const idempotencyRules = Object.freeze({
  /** The namespace escaped (`%25`, `%3A`), `:`, the key. */
  storeKey: (namespace: string, key: string): string => core().idemStoreKey(namespace, key),
  /** `prefix` then the store key. */
  redisKey: (prefix: string, storeKey: string): string => core().idemRedisKey(prefix, storeKey),
  /** Lowercase hex SHA-256 of the RFC 8785 form of a JSON text. */
  argumentHash: (argumentsJson: string): string => core().idemArgumentHash(argumentsJson),
  /** The claim as stored. */
  running: (hash: string, owner: string): string => core().idemRunning(hash, owner),
  /** The finished call as stored (the result a JSON object's text). */
  done: (hash: string, resultJson: string): string => core().idemDone(hash, resultJson),
  /** What a key holds, read; `idempotency_entry_invalid` for anything else. */
  readEntry: (raw: string | Uint8Array): StoredEntry => decodeEntry(raw),
  /** A held entry for this call's hash: `conflict`, `in_flight`, or `replay` with the result's JSON for the retry's protocol revision (`''`: none known). */
  held: (raw: Uint8Array, hash: string, revision: string): { answer: 'conflict' | 'in_flight' | 'replay'; replayed?: string } => {
    const a = core().idemHeld(raw, hash, revision);
    return a === 'c' ? { answer: 'conflict' } : a === 'w' ? { answer: 'in_flight' } : { answer: 'replay', replayed: a.slice(1) };
  },
  /** Milliseconds to sleep before claiming again, or `null`: the wait is over. */
  wait: (nowMs: number, deadlineMs: number, round: number): number | null => {
    const ms = core().idemWait(nowMs, deadlineMs, round);
    return ms < 0 ? null : ms;
  },
  /** The default refusal's JSON. */
  refusal: (outcome: string, key: string): string => core().idemRefusal(outcome, key),
  /** `SET key entry NX PX leaseMs`. */
  redisClaimArgs: (key: string, entry: string, leaseMs: number): string[] => redisArgs('claim', key, entry, leaseMs),
  /** `GET key`. */
  redisReadArgs: (key: string): string[] => redisArgs('read', key, '', 0),
  /** `SET key entry PX ttlMs`. */
  redisCompleteArgs: (key: string, entry: string, ttlMs: number): string[] => redisArgs('complete', key, entry, ttlMs),
  /** `EVAL <release script> 1 key entry`. */
  redisReleaseArgs: (key: string, entry: string): string[] => redisArgs('release', key, entry, 0),
  /** What a client's reply to `claim`, `read`, `complete` or `release` means. */
  redisReplyMeaning,
});
