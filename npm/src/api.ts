// Shared by both flavours: everything `toolctx` exports but the factory
// (`createVerifier`), which each entry (`node/index.ts`, `web/index.ts`)
// binds to its own flavour of the verifier's wasm glue (`node/glue.ts`,
// `web/glue.ts`). Nothing here loads the conventions module: `AivaxVerifier`
// is the class only (create one with `toolctx/aivax`), the Tuix headers are
// plain TypeScript.
export { ToolctxError, type ToolctxErrorCode } from './errors.js';
export type * from './types.js';
export { Verifier } from './verifier.js';
export { AivaxVerifier } from './aivax-verifier.js';
export { contextFrom, aivaxContextFrom, authInfoFrom, type ContextSource } from './context.js';
export { toolctx, type ToolctxIncomingMessage, type NextFunction, type MiddlewareOptions } from './middleware.js';
export { withToolctx, type FetchOptions } from './fetch.js';
export { memoryReplayStore } from './replay.js';
export { redisReplayStore, type RedisReplayStoreOptions, type RedisSend, type RedisCommandClient } from './redis.js';
export { TELEMETRY, type VerdictEvent, type TelemetryOptions, type OpenTelemetryApi } from './telemetry.js';
export { tuixHeaders, withoutTuixHeaders, TUIX_HEADERS, TUIX_HEADER_NAMES } from './tuix.js';
export { upstreamHeaders } from './upstream.js';
