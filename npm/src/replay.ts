/**
 * The replay guard (CONTRACT §3, `token_replayed`): after all 14 steps
 * pass, the token's `jti` must not have been used before. Off unless
 * `createVerifier({ replayGuard })` names a store. The decision stays in
 * the core: the in-memory store is the core's `ReplayCache`, held by the
 * verifier's WebAssembly instance; with a shared store the verifier claims
 * the `jti` after the core accepted and answers a failed claim with the
 * core's refusal.
 */

/**
 * A store shared by several processes (`redisReplayStore`, or your own).
 * `firstUse` must be atomic across every process sharing the store.
 */
export interface ReplayStore {
  /**
   * Records `jti` as used until `until` (Unix seconds; `now` is the
   * verifier's clock) and resolves to `true`, or resolves to `false` when
   * it is already recorded. Anything but `true` refuses the call
   * (`token_replayed`); a rejection refuses it too (`internal_error`).
   */
  firstUse(jti: string, until: number, now: number): Promise<boolean>;
}

/** The in-memory guard: one `ReplayCache` of the core per verifier. */
export interface MemoryReplayStore {
  readonly kind: 'memory';
  /** Live token ids kept at most; when all are live, new tokens are refused. */
  readonly capacity: number;
}

export type ReplayGuard = MemoryReplayStore | ReplayStore;

export interface MemoryReplayStoreOptions {
  /**
   * Live token ids kept at most. Size it for your call rate times the
   * token lifetime plus the clock skew (100 calls/s with 300 s tokens and
   * 30 s skew: 33,000). Default 100,000.
   */
  capacity?: number;
}

/**
 * The replay guard for a server with one process: the core's bounded
 * cache inside the verifier, each id forgotten once its token has expired.
 * Several replicas need a shared store (`redisReplayStore`).
 */
export function memoryReplayStore(options: MemoryReplayStoreOptions = {}): MemoryReplayStore {
  return Object.freeze({ kind: 'memory' as const, capacity: options.capacity ?? 100_000 });
}
