/**
 * Redis for servers with several replicas: the bounded send both stores
 * use, and the replay guard's store. The idempotency store
 * (`redisIdempotencyStore`, from `toolctx/helpers`) is in
 * `idempotency-redis.ts`, on the core's helper rules.
 *
 * The replay guard's store (`redisReplayStore`, from `toolctx`): a token id
 * is claimed with the core's command (`SET key 1 NX PX ms`, kept until the
 * token expires; `toolctx_core::replay::redis::claim_args`, from the
 * verifier's WebAssembly module), and the core reads the reply
 * (`claim_answer`).
 *
 * toolctx depends on no Redis client: hand it any client that sends a raw
 * command, e.g. node-redis v4+ (`client.sendCommand(args)`) or a function
 * (`(args) => ioredis.call(...args)`).
 */
import { throughGlue } from './boundary/failures.js';
import { ToolctxError } from './errors.js';
import { replayCore, type ClaimAnswer, type ReplayStore } from './replay.js';

/** Sends one command as its arguments (`['SET', key, value, 'NX', 'PX', '1000']`) and resolves to its reply. */
export type RedisSend = (args: string[]) => Promise<unknown>;

/** node-redis v4+ clients have this method. */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * The client's send, each reply bounded by the user's `timeoutMs` as the
 * core's store timeout rule reads it (`rule`, the `redisTimeoutMs` of the
 * module at hand: undefined or 0 the default, else whole milliseconds from
 * 1 to 60,000; what it refuses throws): a paused Redis fails calls, it
 * does not hold them. node-redis's own
 * `timeout` covers a command only until it is written, and a Redis that is
 * paused or cut off answers nothing: without a bound, every guarded call
 * would wait for it. A command that timed out may still be applied later;
 * both stores stay on the safe side of that (a late claim only refuses or
 * holds back a retry, never runs a call twice).
 */
export function sender(client: RedisCommandClient | RedisSend, timeoutMs: unknown, rule: (raw: number | undefined) => number): RedisSend {
  if (timeoutMs !== undefined && typeof timeoutMs !== 'number') throw new ToolctxError('config_type', 'setting `timeoutMs` has the wrong type');
  const ms = throughGlue(() => rule(timeoutMs));
  if (typeof client !== 'function' && typeof client?.sendCommand !== 'function') {
    throw new ToolctxError('config_type', 'the Redis client needs sendCommand(args), or pass a function (args) => reply');
  }
  const send: RedisSend = typeof client === 'function' ? client : (args) => client.sendCommand(args);
  return (args) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`toolctx: redis: no reply within ${ms} ms (${args[0]})`)), ms);
      const settle = <T>(f: (v: T) => void) => (v: T) => {
        clearTimeout(timer);
        f(v);
      };
      let sent: Promise<unknown>;
      try {
        sent = Promise.resolve(send(args));
      } catch (e) {
        sent = Promise.reject(e);
      }
      sent.then(settle(resolve), settle(reject));
    });
}

export interface RedisReplayStoreOptions {
  /** Prefixed to every token id. Default `"toolctx:jti:"` (the core's). */
  prefix?: string;
  /**
   * How long the claim may wait for its reply, in milliseconds, before the
   * call is refused (`internal_error`). Default (and 0) the core's store
   * timeout, 500; the core rounds it to whole milliseconds and refuses
   * anything outside 1 to 60,000 (`limit_out_of_range`, thrown here). The
   * claim is sent once, never retried.
   */
  timeoutMs?: number;
}

const NO_BYTES = new Uint8Array(0);
const utf8 = new TextEncoder();

/**
 * A Redis client's reply as the core reads replies (a kind and its bytes):
 * node-redis and ioredis hand a status or string over as a string, nil as
 * `null`, bytes as a Buffer, integers as numbers (or bigints).
 */
export function replyParts(reply: unknown): [string, Uint8Array] {
  if (reply === null || reply === undefined) return ['nil', NO_BYTES];
  if (typeof reply === 'string') return ['status', utf8.encode(reply)];
  if (reply instanceof Uint8Array) return ['bulk', reply];
  if ((typeof reply === 'number' && Number.isSafeInteger(reply)) || typeof reply === 'bigint') return ['integer', utf8.encode(String(reply))];
  if (reply instanceof Error) return ['error', utf8.encode(reply.message)];
  return ['other', NO_BYTES];
}

/**
 * The replay guard's store in Redis, for several replicas:
 * `createVerifier({ ..., replayGuard: redisReplayStore(client) })`. Each
 * token id is one key, set with `SET key 1 NX PX ms` (atomic: one replica
 * wins) and expiring when its token could no longer be accepted anyway.
 * What the reply means is the core's (`OK` a first use, nil a replay,
 * anything else `failed`); a Redis error or timeout refuses the call
 * (`internal_error`), never lets it through.
 */
export function redisReplayStore(client: RedisCommandClient | RedisSend, options: RedisReplayStoreOptions = {}): ReplayStore {
  const core = replayCore();
  const send = sender(client, options.timeoutMs, core.redisTimeoutMs);
  const prefix = options.prefix ?? core.redisKeyPrefix();
  return {
    async firstUse(jti, until, now) {
      const [kind, value] = replyParts(await send(core.redisClaimArgs(prefix, jti, until, now)));
      return core.redisClaimAnswer(kind, value) as ClaimAnswer;
    },
  };
}
