/**
 * The web flavour of the verifier's glue, for workerd, workers and
 * browsers: the `.wasm` is imported as a module (a `WebAssembly.Module` in
 * workerd and bundlers) and instantiated synchronously with `initSync`, once.
 */
import { Verifier, initSync } from '../wasm/web/toolctx_wasm.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from '../wasm/web/toolctx_wasm_bg.wasm';

initSync({ module: wasmModule as WebAssembly.Module });

export const glue = { Verifier };
