/**
 * Runs in Node: `toolctx/aivax` (export condition `node`). The conventions
 * module loads synchronously at import. The AIVAX verifier (CONTRACT §7); the
 * middleware and the fetch wrapper of `toolctx` take it as they take
 * `createVerifier`'s. The web flavour is `../web/aivax.ts`.
 */
import { aivaxVerifierFactory, AivaxVerifier } from '../aivax-verifier.js';
import type { AivaxVerifierOptions } from '../types.js';
import { glue } from './conventions-glue.js';
// Found here too: a direct `verify` records when the API is installed.
import './otel.js';

export { AivaxVerifier };
export { aivaxContextFrom } from '../context.js';
export { ToolctxError, type ToolctxErrorCode } from '../errors.js';
export type { AivaxContext, AivaxVerifierOptions, AivaxVerifyResult } from '../types.js';

/**
 * The AIVAX profile: validates the configuration once; throws a
 * `ToolctxError` with a stable `code` on a bad one (never showing the hook key).
 */
export const createAivaxVerifier: (options: AivaxVerifierOptions) => AivaxVerifier = aivaxVerifierFactory(glue.AivaxVerifier, glue.describeRequest);
