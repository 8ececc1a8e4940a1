/**
 * Runs in workerd, workers and browsers: `toolctx/aivax` (export conditions
 * `workerd`, `worker`, `browser`, and the default). The conventions module's
 * `.wasm` is imported as a module and instantiated with `initSync`. The AIVAX
 * verifier (CONTRACT §7); the middleware and the fetch wrapper of `toolctx`
 * take it as they take `createVerifier`'s. The Node flavour is
 * `../node/aivax.ts`.
 */
import { aivaxVerifierFactory, AivaxVerifier } from '../aivax-verifier.js';
import type { AivaxVerifierOptions } from '../types.js';
import { glue } from './conventions-glue.js';

export { AivaxVerifier };
export { aivaxContextFrom } from '../context.js';
export { ToolctxError, type ToolctxErrorCode } from '../errors.js';
export type { AivaxContext, AivaxVerifierOptions, AivaxVerifyResult } from '../types.js';

/**
 * The AIVAX profile: validates the configuration once; throws a
 * `ToolctxError` with a stable `code` on a bad one (never showing the hook key).
 */
export const createAivaxVerifier: (options: AivaxVerifierOptions) => AivaxVerifier = aivaxVerifierFactory(glue.AivaxVerifier, glue.describeRequest);
