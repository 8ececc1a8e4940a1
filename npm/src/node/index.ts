/**
 * toolctx for Node: the verifier's WebAssembly module loads synchronously
 * at import. Workers and browsers get `worker.js` through the `exports`
 * conditions. The conventions and the AIVAX verifier are in a second module,
 * loaded only by `toolctx/conventions`, `toolctx/aivax` and `toolctx/helpers`.
 */
import { glue } from './glue.js';
import type { VerifierOptions } from '../types.js';
import { verifierFactory, type Verifier } from '../verifier.js';

export * from '../api.js';

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(glue.Verifier);
