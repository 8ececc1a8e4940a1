/**
 * Runs in workerd, workers and browsers: the conventions module's glue
 * (crates/wasm-conventions), web flavour. The second `.wasm` is imported as
 * a module and instantiated synchronously with `initSync`, once, whichever
 * entry (`toolctx/conventions`, `toolctx/aivax`, `toolctx/helpers`) imports
 * it first; then the core's plain functions are bound
 * (`../core-functions.ts`). The Node flavour is `../node/conventions-glue.ts`.
 */
import { bindCore } from '../core-functions.js';
import * as wasm from '../wasm/web/toolctx_wasm_conventions.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from '../wasm/web/toolctx_wasm_conventions_bg.wasm';

wasm.initSync({ module: wasmModule as WebAssembly.Module });

// Every export of the module: the core's functions (`CoreFunctions`) and
// the AIVAX verifier's class.
export const glue = wasm;

bindCore(glue);
