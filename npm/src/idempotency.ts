/**
 * Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
 * and arguments with a new token. The first call's result is stored under
 * the verified key and a retry is answered from the store, with
 * `_meta["agentarea/replayed"] = true`, without running the tool again.
 *
 * Every rule (store key, argument hash, entry encoding and validation,
 * conflict, wait and replay, refusals, defaults) is the core's
 * (`toolctx_core::helpers::idempotency`, through the conventions module:
 * `core().idem*`), shared with the Python package and toolctx-tower; this
 * file runs the loop (the store's calls, sleeping).
 */
import { canonicalHash, jsonText } from './canonical.js';
import { contextFrom } from './context.js';
import { core, MEMORY_CLAIM, MEMORY_COMPLETE, MEMORY_RELEASE, settingNumber, type IdemMemoryStoreCore } from './core-functions.js';
import { ToolctxError } from './errors.js';
import { callOf, type ToolExtra, type ToolHandler } from './extra.js';

/** A claim held while the first call runs. */
export interface RunningEntry {
  state: 'running';
  /** `canonicalHash` of the arguments. */
  hash: string;
  /** Random id of the claiming call, so only it can release the claim. */
  owner: string;
}

/** The stored result of a call that finished. */
export interface DoneEntry {
  state: 'done';
  hash: string;
  result: unknown;
}

export type StoredEntry = RunningEntry | DoneEntry;

/**
 * Where results live. Implement it for any shared store; `memoryIdempotencyStore` and
 * `redisIdempotencyStore` are the two shipped. Every method may be called concurrently
 * from several processes: `claim` must be atomic.
 */
export interface IdempotencyStore {
  /**
   * Atomically: when `key` holds nothing (or only something expired), store
   * `entry` for `leaseMs` and return `null` (the caller runs the tool);
   * otherwise return what `key` holds, unchanged.
   */
  claim(key: string, entry: RunningEntry, leaseMs: number): Promise<StoredEntry | null>;
  /** Stores the finished call for `ttlMs`, replacing the claim. */
  complete(key: string, entry: DoneEntry, ttlMs: number): Promise<void>;
  /** Drops the claim `entry` (the tool threw), only if `key` still holds exactly it. */
  release(key: string, entry: RunningEntry): Promise<void>;
}

/**
 * Why a call was refused: `conflict` (same key, other arguments),
 * `in_progress` (the first call still running after `waitMs`), `unverified`
 * (no verified context, so no key: see `allowUnverified`).
 */
export type IdempotencyOutcome = 'conflict' | 'in_progress' | 'unverified';

export interface IdempotencyOptions {
  /** Default: an in-memory LRU (`memoryIdempotencyStore()`), one per wrapped tool. */
  store?: IdempotencyStore;
  /** How long a result is kept. Default 24 h. */
  ttlMs?: number;
  /**
   * How long a claim lasts if its process dies before completing it. Set it
   * above the tool's longest run (the platform waits `tool_timeout_seconds`,
   * 300 s by default, up to 1800 s). Default 30 min.
   */
  leaseMs?: number;
  /** How long a duplicate waits for the first call to finish. Default 60 s. */
  waitMs?: number;
  /**
   * Keeps this tool's keys apart from other tools' in a shared store (one
   * namespace per tool, say). Joined with the key by `idempotencyStoreKey`,
   * so that two namespaces never share a key. Default `""`.
   */
  namespace?: string;
  /**
   * A call with no verified toolctx context has no idempotency key, so it
   * cannot be guarded: by default it is refused (`unverified`) and the tool
   * does not run. `true` runs such calls as they are, unguarded: for a server
   * whose verifier has `requireContext: false` and whose tool is safe to run
   * twice for callers without a context.
   */
  allowUnverified?: boolean;
  /**
   * The answer to a refused call: a duplicate with other arguments
   * (`conflict`), the first call still running after `waitMs`
   * (`in_progress`), or a call without verified context (`unverified`; `key`
   * is then `""`). Default: an `isError` result naming the reason, with
   * `_meta["toolctx/idempotency"]` set to the outcome.
   */
  refuse?: (outcome: IdempotencyOutcome, key: string) => unknown;
  /**
   * Told when the store fails after the tool ran (recording its result, or
   * dropping the claim of a call that threw or asked for input); the call's
   * own outcome still stands and the claim expires with its lease. Default
   * `console.warn`.
   */
  onStoreError?: (error: unknown) => void;
  /**
   * Hashes the arguments for the conflict check. Default `canonicalHash`
   * (the core's: SHA-256 of the RFC 8785 form).
   */
  hash?: (args: unknown) => string | Promise<string>;
  /** Unix milliseconds; for tests. */
  now?: () => number;
}

/** The core's defaults and names (`idemDefaults`). */
export interface IdempotencyDefaults {
  keyPrefix: string;
  ttlMs: number;
  leaseMs: number;
  waitMs: number;
  memoryEntries: number;
  storeTimeoutMs: number;
  claimRounds: number;
  replayed: string;
  outcomeKey: string;
  releaseScript: string;
  outcomes: IdempotencyOutcome[];
}

let defaultsRead: IdempotencyDefaults | undefined;

/** The core's defaults and names, read once from the conventions module. */
export function idempotencyDefaults(): IdempotencyDefaults {
  defaultsRead ??= JSON.parse(core().idemDefaults()) as IdempotencyDefaults;
  return defaultsRead;
}

/** The `_meta` key the platform reads on a replayed result (the core's). */
export const REPLAYED: string = idempotencyDefaults().replayed;

/**
 * The store key of an idempotency key in a namespace (the core's): the
 * namespace with `%` and `:` percent-escaped (`%25`, `%3A`), then `:`, then
 * the key, so two namespaces never share a store key (`"a"` + `"b:c"` is
 * `a:b:c`, `"a:b"` + `"c"` is `a%3Ab:c`).
 */
export function idempotencyStoreKey(namespace: string, key: string): string {
  return core().idemStoreKey(namespace, key);
}

/** Runs one of the core's idempotency functions, turning its refusal (`"<code>\n<message>"`) into a `ToolctxError`. */
function throughCore<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (typeof e === 'string') {
      const code = e.slice(0, e.indexOf('\n'));
      const message = e.slice(e.indexOf('\n') + 1);
      throw new ToolctxError(code === 'idempotency_entry_invalid' ? code : 'internal', message.startsWith('idempotent: ') ? message : `idempotent: ${message}`);
    }
    throw e;
  }
}

/**
 * Wraps a tool handler `(args, extra) => result`:
 *
 * - a call without verified context has no key: it is refused
 *   (`unverified`, the tool does not run) unless `allowUnverified: true`
 *   runs it unguarded;
 * - the first call with a key claims it in the store, runs, and stores its
 *   result (an `isError` result too: the tool ran). A handler that throws
 *   releases the claim, so a retry runs again;
 * - a duplicate with the same arguments (`canonicalHash(args)`) gets the
 *   stored result with `_meta["agentarea/replayed"] = true`, or waits up to
 *   `waitMs` while the first call runs;
 * - a duplicate with other arguments is refused as a conflict, never replayed;
 * - an `input_required` result (SDK v2's `inputRequired(...)`, a round of a
 *   2026-07-28 multi-round-trip call) is not stored: the claim is released
 *   and the round that carries the client's answers runs the tool;
 * - the store failing before the tool runs fails the call with a
 *   `ToolctxError` (`idempotency_store_failed`, or
 *   `idempotency_entry_invalid` when the key holds something that is not an
 *   entry) and the tool does not run; once the tool ran, a store error goes
 *   to `onStoreError` and the call's outcome stands.
 *
 * A replay is the stored result (stored era-neutral: without `resultType`,
 * members in canonical order, its `_meta` included),
 * `_meta["agentarea/replayed"]` added and `resultType: "complete"` where
 * the retry's protocol revision has it, as the core writes it.
 *
 * Put `cancellable` outside it, so that a cancelled duplicate stops waiting.
 */
export function idempotent<A, E extends ToolExtra, R>(
  handler: ToolHandler<A, E, R>,
  options: IdempotencyOptions = {},
): (args: A, extra: E) => Promise<R> {
  const store = options.store ?? memoryIdempotencyStore();
  // The core's settings table: not given or 0 its default, out of range refused.
  const ttlMs = settingNumber('idempotency_ttl_ms', options.ttlMs);
  const leaseMs = settingNumber('idempotency_lease_ms', options.leaseMs);
  const waitMs = settingNumber('idempotency_wait_ms', options.waitMs);
  const namespace = options.namespace ?? '';
  const now = options.now ?? Date.now;
  const hashOf = options.hash ?? canonicalHash;
  const refuse = options.refuse ?? refusal;
  const onStoreError = options.onStoreError ?? ((e: unknown) => console.warn('toolctx: the idempotency store failed after the tool ran', e));
  // After the tool ran, a store error is reported, never thrown: the call's outcome stands.
  const settle = (done: Promise<void>): Promise<void> =>
    done.then(undefined, (e: unknown) => {
      try {
        onStoreError(e);
      } catch {
        // A hook that throws changes nothing either.
      }
    });

  const allowUnverified = options.allowUnverified === true;
  return async function idempotentTool(args: A, extra: E): Promise<R> {
    const { signal, revision } = callOf(extra, 'idempotent');
    const context = contextFrom(extra);
    if (context === undefined) return allowUnverified ? handler(args, extra) : (refuse('unverified', '') as R);
    const key = idempotencyStoreKey(namespace, context.idempotency_key);
    const hash = await hashOf(args ?? {});
    const mine: RunningEntry = { state: 'running', hash, owner: crypto.randomUUID() };
    const start = now();
    for (let round = 0; ; round++) {
      const held = await claim(store, key, mine, leaseMs);
      if (held === null) break;
      // The core decides: a conflict, the replay, or wait and claim again.
      const answer = throughCore(() => core().idemHeld(new TextEncoder().encode(encodeEntry(held)), hash, revision));
      if (answer === 'c') return refuse('conflict', context.idempotency_key) as R;
      if (answer.startsWith('r')) return JSON.parse(answer.slice(1)) as R;
      const pause = core().idemWait(now() - start, waitMs, round);
      if (pause < 0 || signal?.aborted) return refuse('in_progress', context.idempotency_key) as R;
      await sleep(pause, signal);
    }
    let result: R;
    try {
      result = await handler(args, extra);
    } catch (e) {
      await settle(attempt(() => store.release(key, mine)));
      throw e;
    }
    if (isInputRequired(result)) {
      // A round of a 2026-07-28 multi-round-trip call, not its outcome: the
      // client answers and sends the same call again, which must reach the
      // tool. Nothing is stored; the claim goes, as for a handler that threw.
      await settle(attempt(() => store.release(key, mine)));
      return result;
    }
    await settle(attempt(() => store.complete(key, { state: 'done', hash, result }, ttlMs)));
    return result;
  };
}

/** `f()`, a synchronous throw included, as a promise. */
function attempt<T>(f: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * The store's claim, before the tool runs: a store that fails refuses the
 * call (`idempotency_store_failed`, the tool does not run), and what the
 * store holds must be an entry (`idempotency_entry_invalid`), whichever
 * store it is.
 */
async function claim(store: IdempotencyStore, key: string, mine: RunningEntry, leaseMs: number): Promise<StoredEntry | null> {
  let held: StoredEntry | null;
  try {
    held = await attempt(() => store.claim(key, mine, leaseMs));
  } catch (e) {
    if (e instanceof ToolctxError) throw e;
    throw Object.assign(new ToolctxError('idempotency_store_failed', `idempotent: the store failed, the tool did not run: ${String(e instanceof Error ? e.message : e)}`), { cause: e });
  }
  return held === null ? null : checkEntry(held);
}

/**
 * `value` as a stored entry, or `idempotency_entry_invalid` (the core's
 * reading): a key holding something toolctx did not write (another
 * program's value, a truncated write) is never replayed or taken for a
 * running call.
 */
export function checkEntry(value: unknown): StoredEntry {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  return decodeEntry(text ?? '');
}

/** An entry as stored (the core's encoding: compact JSON with a fixed member order, so that `release` can compare the exact text `claim` wrote). */
export function encodeEntry(entry: StoredEntry): string {
  return entry.state === 'running'
    ? core().idemRunning(entry.hash, entry.owner)
    : throughCore(() => core().idemDone(entry.hash, jsonText(entry.result, 'idempotent')));
}

/** What a store holds (a string or UTF-8 bytes) as an entry (the core's reading); anything else is `idempotency_entry_invalid`. */
export function decodeEntry(raw: unknown): StoredEntry {
  const bytes = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw instanceof Uint8Array ? raw : new Uint8Array();
  return JSON.parse(throughCore(() => core().idemReadEntry(bytes))) as StoredEntry;
}

/** SDK v2's `inputRequired(...)` result (protocol 2026-07-28): the call asks the client for input first. */
function isInputRequired(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { resultType?: unknown }).resultType === 'input_required';
}

/** The core's default refusal for `outcome`. */
function refusal(outcome: IdempotencyOutcome, key: string): unknown {
  return JSON.parse(throughCore(() => core().idemRefusal(outcome, key)));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface MemoryIdempotencyStoreOptions {
  /** Entries kept; the least recently used goes first. Read by the core's settings table (`undefined` or 0: its default). */
  maxEntries?: number;
  /** Milliseconds on a clock that only moves forward (default `Date.now`); for tests. */
  now?: () => number;
}

/** The core's store for the user's `maxEntries`, read by the core's settings table. */
export function memoryStoreCore(maxEntries: number | undefined): IdemMemoryStoreCore {
  return new (core().IdemMemoryStore)(settingNumber('idempotency_memory_entries', maxEntries));
}

/**
 * The in-memory store, for a server with one process (several replicas
 * behind a load balancer: `redisIdempotencyStore`): the core's
 * (`toolctx_core::helpers::memory`, through the conventions module; shared
 * with the Python package and toolctx-tower). Expiry, capacity (the least
 * recently used leaves first) and the release rule (only while the key
 * holds exactly the caller's claim) are the core's. Entries are kept as
 * their JSON text, as in Redis: a replay is the result as it was sent,
 * whatever became of the object since.
 */
export function memoryIdempotencyStore(options: MemoryIdempotencyStoreOptions = {}): IdempotencyStore & { readonly size: number } {
  const store = memoryStoreCore(options.maxEntries);
  const now = options.now ?? Date.now;
  return {
    get size() {
      return store.size;
    },
    async claim(key, entry, leaseMs) {
      const held = store.run(MEMORY_CLAIM, key, encodeEntry(entry), leaseMs, now());
      return held === undefined ? null : decodeEntry(held);
    },
    async complete(key, entry, ttlMs) {
      store.run(MEMORY_COMPLETE, key, encodeEntry(entry), ttlMs, now());
    },
    async release(key, entry) {
      store.run(MEMORY_RELEASE, key, encodeEntry(entry), 0, now());
    },
  };
}
