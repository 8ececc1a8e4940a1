/**
 * toolctx for workerd, workers and browsers: the `.wasm` is imported as a
 * module (a `WebAssembly.Module` in workerd and bundlers) and instantiated
 * synchronously with `initSync`.
 */
import { initSync, Verifier as WasmVerifier } from './wasm/web/toolctx_wasm.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from './wasm/web/toolctx_wasm_bg.wasm';
import type { VerifierOptions } from './types.js';
import { verifierFactory, type Verifier } from './verifier.js';

initSync({ module: wasmModule as WebAssembly.Module });

export * from './api.js';

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(WasmVerifier);
