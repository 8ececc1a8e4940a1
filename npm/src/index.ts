/**
 * toolctx for Node: the WebAssembly core loads synchronously at import.
 * Workers and browsers get `worker.js` through the `exports` conditions.
 */
import { Verifier as WasmVerifier } from './wasm/node/toolctx_wasm.js';
import type { VerifierOptions } from './types.js';
import { verifierFactory, type Verifier } from './verifier.js';

export * from './api.js';

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(WasmVerifier);
