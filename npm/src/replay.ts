/**
 * The replay guard (CONTRACT §3, `token_replayed`, `replay_guard_full`):
 * after all 14 steps pass, the token's `jti` must not have been used
 * before. Off unless `createVerifier({ replayGuard })` names a store. The
 * decision stays in the core: the in-memory store is the core's
 * `ReplayCache`, held by the verifier's WebAssembly instance; with a shared
 * store the core says what to claim (or refuses a token without `jti`), the
 * verifier asks the store, and the core turns the store's answer into the
 * final verdict.
 */

/**
 * What a shared store may answer for a token id (the core's `ClaimAnswer`):
 * `first_use` accepts; `used` refuses `token_replayed` (401); `full` (the
 * store holds all the ids it can) `replay_guard_full` (503, retryable);
 * `failed` `internal_error` (500).
 */
export type ClaimAnswer = 'first_use' | 'used' | 'full' | 'failed';

/** The core's replay vocabulary, from the verifier's WebAssembly module (crates/wasm/src/replay.rs, lib.rs). */
export interface ReplayCore {
  /** `['SET', key, '1', 'NX', 'PX', ms]` for `jti` until `until` at `now`. */
  redisClaimArgs(prefix: string, jti: string, until: number, now: number): string[];
  /** The default key prefix (`toolctx:jti:`). */
  redisKeyPrefix(): string;
  /** What Redis's reply to the claim means: `kind` (`nil`, `status`, `bulk`, `integer`, `error`, `other`) and its bytes. */
  redisClaimAnswer(kind: string, value: Uint8Array): string;
  /**
   * How long one Redis command may wait for its reply, in milliseconds: the
   * core's rule over the user's `timeoutMs` (undefined or 0: the default,
   * 500); throws `"<code>\n<message>"` for a number it refuses.
   */
  redisTimeoutMs(raw: number | undefined): number;
}

let core: ReplayCore | undefined;

/** Called by the entries that load the verifier's module (`node/index.ts`, `web/index.ts`). */
export function bindReplayCore(bound: ReplayCore): void {
  core ??= bound;
}

/** The bound core; throws when no entry loaded the verifier's module. */
export function replayCore(): ReplayCore {
  if (core === undefined) throw new Error('toolctx: the verifier module is not loaded: import the replay stores from toolctx');
  return core;
}

/**
 * A store shared by several processes (`redisReplayStore`, or your own).
 * `firstUse` must be atomic across every process sharing the store.
 */
export interface ReplayStore {
  /**
   * Records `jti` as used until `until` (Unix seconds; `now` is the
   * verifier's clock) and resolves to one of the core's answers:
   * `'first_use'`, `'used'` when it is already recorded, `'full'` when it
   * cannot record more, `'failed'`. A bool is still taken (`true`: first
   * use, `false`: used). A rejection, or any other answer, is `'failed'`.
   * The core decides what each answer means.
   */
  firstUse(jti: string, until: number, now: number): Promise<boolean | ClaimAnswer>;
}

/** The in-memory guard: one `ReplayCache` of the core per verifier. */
export interface MemoryReplayStore {
  readonly kind: 'memory';
  /**
   * Live token ids kept at most, as given (0: the core's default);
   * when all are live, fresh tokens are refused `replay_guard_full` (503).
   */
  readonly capacity: number;
}

export type ReplayGuard = MemoryReplayStore | ReplayStore;

export interface MemoryReplayStoreOptions {
  /**
   * Live token ids kept at most. Size it for your call rate times the
   * token lifetime plus the clock skew (100 calls/s with 300 s tokens and
   * 30 s skew: 33,000). Default (and 0) the core's; the core refuses a
   * number outside the range of `replay_capacity` in its settings table
   * (docs/CONTRACT.md §5.3; `limit_out_of_range`, thrown by
   * `createVerifier`).
   */
  capacity?: number;
}

/**
 * The replay guard for a server with one process: the core's bounded
 * cache inside the verifier, each id forgotten once its token has expired.
 * Several replicas need a shared store (`redisReplayStore`).
 */
export function memoryReplayStore(options: MemoryReplayStoreOptions = {}): MemoryReplayStore {
  // As given (not given: 0): `createVerifier` hands it to the core, which
  // reads it (0: its default, the settings table's `replay_capacity`) or refuses it.
  return Object.freeze({ kind: 'memory' as const, capacity: options.capacity ?? 0 });
}
