/**
 * `toolctx/aivax` for workerd, workers and browsers: the conventions module's `.wasm` is imported as a module and instantiated with `initSync`.
 * The AIVAX verifier (CONTRACT §7); the middleware and the fetch wrapper of
 * `toolctx` take it as they take `createVerifier`'s.
 */
import { aivaxVerifierFactory, AivaxVerifier } from '../aivax-verifier.js';
import { glue } from './conventions-glue.js';
import type { AivaxVerifierOptions } from '../types.js';

export { AivaxVerifier };
export { aivaxContextFrom } from '../context.js';
export { ToolctxError, type ToolctxErrorCode } from '../errors.js';
export type { AivaxContext, AivaxVerifierOptions, AivaxVerifyResult } from '../types.js';

/**
 * The AIVAX profile: validates the configuration once; throws a
 * `ToolctxError` with a stable `code` on a bad one (never showing the hook key).
 */
export const createAivaxVerifier: (options: AivaxVerifierOptions) => AivaxVerifier = aivaxVerifierFactory(glue.AivaxVerifier);
