/**
 * Shared by both flavours: the core's plain functions (CONTRACT §6 and §7),
 * as one flavour of the conventions module's glue exports them. Each flavour
 * binds itself at import (`node/conventions-glue.ts`,
 * `web/conventions-glue.ts`); the first one bound is used. Nothing here
 * loads WebAssembly.
 */
import { ToolctxError, type ToolctxErrorCode } from './errors.js';

export interface CoreFunctions {
  qualifiedToolName(instanceName: string, tool: string): string;
  serverLabel(instanceName: string): string;
  /** RFC 8785 over a JSON text; throws `"<code>\n<message>"`. */
  canonicalJson(text: string): string;
  tuixIdempotencyKey(sessionId: string, turn: string, tool: string, argumentsJson: string): string;
  /** The core's result limits and codes as JSON (`crates/wasm-conventions/src/helpers_limits.rs`). */
  resultLimits(): string;
  /** The findings of a result's JSON, as a JSON array; throws `"<code>\n<message>"`. */
  checkResult(resultJson: string): string;
  /** One call's progress coalescing state (the core's rule). */
  ProgressCoalescer: new (intervalMs: number) => ProgressCoalescerCore;
  /** The idempotency helper's rules (crates/wasm-conventions/src/idempotency.rs); refusals throw `"<code>\n<message>"`. */
  idemStoreKey(namespace: string, key: string): string;
  idemRedisKey(prefix: string, storeKey: string): string;
  idemArgumentHash(argumentsJson: string): string;
  idemRunning(hash: string, owner: string): string;
  idemDone(hash: string, resultJson: string): string;
  idemReadEntry(raw: Uint8Array): string;
  /** `c` conflict, `w` in flight, `r` + the replayed result's JSON. */
  idemHeld(raw: Uint8Array, hash: string, revision: string): string;
  /** Milliseconds to sleep, or -1: the wait is over. */
  idemWait(nowMs: number, deadlineMs: number, round: number): number;
  idemRefusal(outcome: string, key: string): string;
  /** A store command's arguments as a JSON array of strings. */
  idemRedisArgs(command: string, key: string, entry: string, ms: number): string;
  idemRedisMeaning(command: string, kind: string, value: Uint8Array): string;
  idemDefaults(): string;
  /** The core's in-memory idempotency store (crates/wasm-conventions/src/idempotency.rs), for `capacity` entries as `readSetting` read them. */
  IdemMemoryStore: new (capacity: number) => IdemMemoryStoreCore;
  /** The cancellation key of a call (its id's JSON text, its token header's value), or undefined (crates/wasm-conventions/src/cancel.rs). */
  cancelKey(idJson: string, token: string | undefined): string | undefined;
  /** The header whose value the cancellation key holds. */
  cancelHeader(): string;
  /** A setting of the core's table read from the user's value; throws `"<code>\n<message>"`. */
  readSetting(name: string, raw: unknown): unknown;
  /** The core's store timeout rule (as `ReplayCore.redisTimeoutMs`); throws `"<code>\n<message>"`. */
  redisTimeoutMs(raw: number | undefined): number;
}

/** The core's progress coalescing for one call; answers are tagged strings (see `progress.ts`). */
export interface ProgressCoalescerCore {
  report(now: number, progress: number, total?: number, message?: string): string;
  tick(now: number): string;
  flush(now: number): string;
  close(): void;
  readonly sent: number;
}

/**
 * The core's in-memory idempotency store: entries as their stored text,
 * times in milliseconds. `run(op, ...)`: `MEMORY_CLAIM` (`undefined` when
 * the claim is the caller's, else the entry that holds `key`),
 * `MEMORY_READ`, `MEMORY_COMPLETE`, `MEMORY_RELEASE` (`''` when the key held
 * exactly `entry` and is deleted, else `undefined`).
 */
export interface IdemMemoryStoreCore {
  run(op: number, key: string, entry: string, ms: number, now: number): string | undefined;
  readonly size: number;
}
export const MEMORY_CLAIM = 0;
export const MEMORY_READ = 1;
export const MEMORY_COMPLETE = 2;
export const MEMORY_RELEASE = 3;

let bound: CoreFunctions | undefined;

export function bindCore(functions: CoreFunctions): void {
  bound ??= functions;
}

export function core(): CoreFunctions {
  if (bound === undefined) throw new ToolctxError('internal', 'the conventions module is not loaded: import toolctx/conventions');
  return bound;
}

/**
 * A numeric setting of the core's table (docs/CONTRACT.md §5.3) read from
 * the user's value as given (`undefined`: its default); the core's refusal
 * (`config_type`, `limit_out_of_range`) thrown as a `ToolctxError`.
 */
export function settingNumber(name: string, raw: unknown): number {
  try {
    return core().readSetting(name, raw) as number;
  } catch (e) {
    if (typeof e !== 'string') throw e;
    const nl = e.indexOf('\n');
    throw new ToolctxError(e.slice(0, nl) as ToolctxErrorCode, e.slice(nl + 1));
  }
}
