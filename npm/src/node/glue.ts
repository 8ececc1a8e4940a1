/** The Node flavour of the verifier's glue: the WebAssembly module loads synchronously at import. */
import { Verifier } from '../wasm/node/toolctx_wasm.js';

export const glue = { Verifier };
