/**
 * Runs in Node: the conventions module's glue (crates/wasm-conventions),
 * Node flavour. Loads synchronously at import and binds the core's plain
 * functions (`../core-functions.ts`), once, whichever entry
 * (`toolctx/conventions`, `toolctx/aivax`, `toolctx/helpers`) imports it
 * first. The web flavour is `../web/conventions-glue.ts`.
 */
import { bindCore } from '../core-functions.js';
import * as wasm from '../wasm/node/toolctx_wasm_conventions.js';

// Every export of the module: the core's functions (`CoreFunctions`) and
// the AIVAX verifier's class.
export const glue = wasm;

bindCore(glue);
