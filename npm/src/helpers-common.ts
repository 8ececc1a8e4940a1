/**
 * Server helpers for verified calls (CONTRACT §5): idempotent retries,
 * progress at the platform's rate, result limits, cancellation. Everything
 * but the binding of the core, which `helpers.ts` (workers, browsers) and
 * `helpers-node.ts` do for their own flavour of the wasm.
 */
export { canonicalJson, canonicalHash } from './canonical.js';
export type { ToolExtra, SdkV1Extra, SdkV2Context, CallMeta, ToolHandler, ProgressNotification, Clock } from './extra.js';
export {
  idempotent,
  idempotencyStoreKey,
  memoryIdempotencyStore,
  REPLAYED,
  idempotencyDefaults,
  type IdempotencyDefaults,
  type IdempotencyStore,
  type IdempotencyOptions,
  type IdempotencyOutcome,
  type MemoryIdempotencyStoreOptions,
  type RunningEntry,
  type DoneEntry,
  type StoredEntry,
} from './idempotency.js';
export { redisIdempotencyStore, type RedisIdempotencyStoreOptions } from './idempotency-redis.js';
export { idempotencyRules } from './idempotency-rules.js';
export type { RedisSend, RedisCommandClient } from './redis.js';
export { progress, type Progress, type ProgressOptions } from './progress.js';
export {
  LIMITS,
  checkResult,
  checked,
  text,
  image,
  toolResult,
  textResult,
  jsonResult,
  errorResult,
  withLimits,
  warnInDevelopment,
  type Content,
  type TextContent,
  type ImageContent,
  type ToolResult,
  type LimitCode,
  type LimitFinding,
  type LimitHook,
  type LimitOptions,
  type ImageType,
} from './results.js';
export {
  cancellable,
  noticeCancelled,
  createCancelRegistry,
  defaultCancelRegistry,
  CancelledError,
  type CancelRegistry,
  type CancellableOptions,
} from './cancel.js';
