// Everything but `createVerifier`, which each entry binds to its own build of the wasm.
export { ToolctxError, type ToolctxErrorCode } from './errors.js';
export type * from './types.js';
export { Verifier } from './verifier.js';
export { contextFrom, authInfoFrom, type ContextSource } from './context.js';
export { toolctx, type ToolctxIncomingMessage, type NextFunction, type MiddlewareOptions } from './node.js';
export { withToolctx, type FetchOptions } from './fetch.js';
