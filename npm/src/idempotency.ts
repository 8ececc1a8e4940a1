/**
 * Idempotent tools (CONTRACT §5): a retry carries the same idempotency key
 * and arguments with a new token. The first call's result is stored under
 * the verified key and a retry is answered from the store, with
 * `_meta["agentarea/replayed"] = true`, without running the tool again.
 */
import { canonicalHash } from './canonical.js';
import { contextFrom } from './context.js';
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
 * Where results live. Implement it for any shared store; `memoryStore` and
 * `redisStore` are the two shipped. Every method may be called concurrently
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
  /** Default: an in-memory LRU (`memoryStore()`), one per wrapped tool. */
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
  /** Prefixed to the idempotency key in the store (one namespace per tool, say). Default `""`. */
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
   * Told when the store fails to record a finished call; the result is still
   * returned. Default `console.warn`.
   */
  onStoreError?: (error: unknown) => void;
  /**
   * Hashes the arguments for the conflict check. Default `canonicalHash`
   * (SHA-256 of the RFC 8785 form; `node:crypto` in Node, Web Crypto elsewhere).
   */
  hash?: (args: unknown) => string | Promise<string>;
  /** Unix milliseconds; for tests. */
  now?: () => number;
}

/** The `_meta` key the platform reads on a replayed result. */
export const REPLAYED = 'agentarea/replayed';

const DAY = 24 * 60 * 60 * 1000;

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
 *   and the round that carries the client's answers runs the tool.
 *
 * Put `cancellable` outside it, so that a cancelled duplicate stops waiting.
 */
export function idempotent<A, E extends ToolExtra, R>(
  handler: ToolHandler<A, E, R>,
  options: IdempotencyOptions = {},
): (args: A, extra: E) => Promise<R> {
  const store = options.store ?? memoryStore();
  const ttlMs = options.ttlMs ?? DAY;
  const leaseMs = options.leaseMs ?? 30 * 60 * 1000;
  const waitMs = options.waitMs ?? 60 * 1000;
  const namespace = options.namespace ?? '';
  const now = options.now ?? Date.now;
  const hashOf = options.hash ?? canonicalHash;
  const refuse = options.refuse ?? refusal;
  const onStoreError = options.onStoreError ?? ((e: unknown) => console.warn('toolctx: the idempotency store failed to record a result', e));

  const allowUnverified = options.allowUnverified === true;
  return async function idempotentTool(args: A, extra: E): Promise<R> {
    const signal = callOf(extra, 'idempotent').signal;
    const context = contextFrom(extra);
    if (context === undefined) return allowUnverified ? handler(args, extra) : (refuse('unverified', '') as R);
    const key = namespace + context.idempotency_key;
    const hash = await hashOf(args ?? {});
    const mine: RunningEntry = { state: 'running', hash, owner: crypto.randomUUID() };
    const deadline = now() + waitMs;
    let pause = 10;
    for (;;) {
      const held = await store.claim(key, mine, leaseMs);
      if (held === null) break;
      if (held.hash !== hash) return refuse('conflict', context.idempotency_key) as R;
      if (held.state === 'done') return replayed(held.result) as R;
      if (now() >= deadline || signal?.aborted) return refuse('in_progress', context.idempotency_key) as R;
      await sleep(Math.min(pause, Math.max(1, deadline - now())), signal);
      pause = Math.min(pause * 2, 250);
    }
    let result: R;
    try {
      result = await handler(args, extra);
    } catch (e) {
      await store.release(key, mine).catch(() => undefined);
      throw e;
    }
    if (isInputRequired(result)) {
      // A round of a 2026-07-28 multi-round-trip call, not its outcome: the
      // client answers and sends the same call again, which must reach the
      // tool. Nothing is stored; the claim goes, as for a handler that threw.
      await store.release(key, mine).catch(() => undefined);
      return result;
    }
    try {
      await store.complete(key, { state: 'done', hash, result }, ttlMs);
    } catch (e) {
      onStoreError(e);
    }
    return result;
  };
}

/** SDK v2's `inputRequired(...)` result (protocol 2026-07-28): the call asks the client for input first. */
function isInputRequired(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { resultType?: unknown }).resultType === 'input_required';
}

function replayed(result: unknown): unknown {
  const r = (result ?? {}) as { _meta?: Record<string, unknown> };
  return { ...r, _meta: { ...r._meta, [REPLAYED]: true } };
}

function refusal(outcome: IdempotencyOutcome, key: string): unknown {
  const text =
    outcome === 'conflict'
      ? `idempotency conflict: key ${key} was already used with different arguments`
      : outcome === 'in_progress'
        ? `call ${key} is still running; retry later`
        : 'refused: this tool is idempotent and the call carries no verified toolctx context, so it cannot be guarded ' +
          '(is the toolctx middleware or withToolctx in front of the MCP handler, and its authInfo handed on?)';
  return { content: [{ type: 'text', text }], isError: true, _meta: { 'toolctx/idempotency': outcome } };
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

export interface MemoryStoreOptions {
  /** Entries kept; the least recently used goes first. Default 10000. */
  maxEntries?: number;
  /** Unix milliseconds; for tests. */
  now?: () => number;
}

/**
 * An in-memory LRU with a TTL per entry: for a server with one process. With
 * several replicas behind a load balancer use `redisStore`.
 */
export function memoryStore(options: MemoryStoreOptions = {}): IdempotencyStore & { readonly size: number } {
  const max = options.maxEntries ?? 10000;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on use keeps the LRU at the front.
  const entries = new Map<string, { entry: StoredEntry; expires: number }>();
  const live = (key: string): StoredEntry | null => {
    const slot = entries.get(key);
    if (slot === undefined) return null;
    entries.delete(key);
    if (slot.expires <= now()) return null;
    entries.set(key, slot);
    return slot.entry;
  };
  const put = (key: string, entry: StoredEntry, ms: number): void => {
    entries.delete(key);
    entries.set(key, { entry, expires: now() + ms });
    while (entries.size > max) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      entries.delete(oldest.value);
    }
  };
  return {
    get size() {
      return entries.size;
    },
    async claim(key, entry, leaseMs) {
      const held = live(key);
      if (held !== null) return held;
      put(key, entry, leaseMs);
      return null;
    },
    async complete(key, entry, ttlMs) {
      put(key, entry, ttlMs);
    },
    async release(key, entry) {
      const held = live(key);
      if (held?.state === 'running' && held.owner === entry.owner) entries.delete(key);
    },
  };
}
