/**
 * Redis for servers with several replicas: the bounded send both stores
 * use, and the replay guard's store. The idempotency store
 * (`redisIdempotencyStore`, from `toolctx/helpers`) is in
 * `idempotency-redis.ts`, on the core's helper rules.
 *
 * The replay guard's store (`redisReplayStore`, from `toolctx`): a token id
 * is claimed with the core's command (`SET key 1 NX PX ms`, kept until the
 * token expires; `toolctx_core::replay::redis::claim_args`, from the
 * verifier's WebAssembly module).
 *
 * toolctx depends on no Redis client: hand it any client that sends a raw
 * command, e.g. node-redis v4+ (`client.sendCommand(args)`) or a function
 * (`(args) => ioredis.call(...args)`).
 */
import { ToolctxError } from './errors.js';
import type { ReplayStore } from './replay.js';

/** Sends one command as its arguments (`['SET', key, value, 'NX', 'PX', '1000']`) and resolves to its reply. */
export type RedisSend = (args: string[]) => Promise<unknown>;

/** node-redis v4+ clients have this method. */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** The default bound on a reply: a paused Redis fails calls, it does not hold them. */
const DEFAULT_TIMEOUT_MS = 1000;

/**
 * The client's send, each reply bounded by `timeoutMs`. node-redis's own
 * `timeout` covers a command only until it is written, and a Redis that is
 * paused or cut off answers nothing: without a bound, every guarded call
 * would wait for it. A command that timed out may still be applied later;
 * both stores stay on the safe side of that (a late claim only refuses or
 * holds back a retry, never runs a call twice).
 */
export function sender(client: RedisCommandClient | RedisSend, timeoutMs: number | undefined, defaultMs = DEFAULT_TIMEOUT_MS): RedisSend {
  const ms = timeoutMs ?? defaultMs;
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new ToolctxError('limit_out_of_range', 'redis timeoutMs must be a positive integer (milliseconds)');
  }
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

/** The core's Redis claim, from the verifier's module (crates/wasm). */
export interface RedisClaimCore {
  /** `['SET', key, '1', 'NX', 'PX', ms]` for `jti` until `until` at `now`. */
  redisClaimArgs(prefix: string, jti: string, until: number, now: number): string[];
  /** The default key prefix (`toolctx:jti:`). */
  redisKeyPrefix(): string;
}

let claimCore: RedisClaimCore | undefined;

/** Called by the entries that load the verifier's module (`node/index.ts`, `web/index.ts`). */
export function bindRedisClaim(core: RedisClaimCore): void {
  claimCore ??= core;
}

export interface RedisReplayStoreOptions {
  /** Prefixed to every token id. Default `"toolctx:jti:"` (the core's). */
  prefix?: string;
  /**
   * How long the claim may wait for its reply, in milliseconds, before the
   * call is refused (`internal_error`). Default 1000.
   */
  timeoutMs?: number;
}

/**
 * The replay guard's store in Redis, for several replicas:
 * `createVerifier({ ..., replayGuard: redisReplayStore(client) })`. Each
 * token id is one key, set with `SET key 1 NX PX ms` (atomic: one replica
 * wins) and expiring when its token could no longer be accepted anyway.
 * A Redis error refuses the call (`internal_error`), never lets it through.
 */
export function redisReplayStore(client: RedisCommandClient | RedisSend, options: RedisReplayStoreOptions = {}): ReplayStore {
  const send = sender(client, options.timeoutMs);
  const core = claimCore;
  if (core === undefined) throw new ToolctxError('internal', 'the verifier module is not loaded: import redisReplayStore from toolctx');
  const prefix = options.prefix ?? core.redisKeyPrefix();
  return {
    async firstUse(jti, until, now) {
      // `SET ... NX` answers OK when it set the key, nil when it was there.
      const reply = await send(core.redisClaimArgs(prefix, jti, until, now));
      return reply !== null && reply !== undefined;
    },
  };
}
