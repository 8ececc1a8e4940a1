/**
 * toolctx for workerd, workers and browsers: the `.wasm` is imported as a
 * module (a `WebAssembly.Module` in workerd and bundlers) and instantiated
 * synchronously with `initSync`.
 */
import { aivaxVerifierFactory, type AivaxVerifier } from './aivax.js';
import { bindCore } from './core.js';
import { glue } from './core-web.js';
import type { AivaxVerifierOptions, VerifierOptions } from './types.js';
import { verifierFactory, type Verifier } from './verifier.js';

bindCore(glue);

export * from './api.js';

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(glue.Verifier);

/**
 * The AIVAX profile: validates the configuration once; throws a
 * `ToolctxError` with a stable `code` on a bad one (never showing the hook key).
 */
export const createAivaxVerifier: (options: AivaxVerifierOptions) => AivaxVerifier = aivaxVerifierFactory(glue.AivaxVerifier);
