// Everything but the factories (`createVerifier`, `createAivaxVerifier`),
// which each entry binds to its own build of the wasm.
export { ToolctxError, type ToolctxErrorCode } from './errors.js';
export type * from './types.js';
export { Verifier } from './verifier.js';
export { AivaxVerifier } from './aivax.js';
export { contextFrom, aivaxContextFrom, authInfoFrom, type ContextSource } from './context.js';
export { toolctx, type ToolctxIncomingMessage, type NextFunction, type MiddlewareOptions } from './node.js';
export { withToolctx, type FetchOptions } from './fetch.js';
export {
  canonicalJson,
  qualifiedToolName,
  serverLabel,
  tuixIdempotencyKey,
  tuixHeaders,
  withoutTuixHeaders,
  TUIX_HEADERS,
  TUIX_HEADER_NAMES,
  type TuixKeyInput,
} from './conventions.js';
