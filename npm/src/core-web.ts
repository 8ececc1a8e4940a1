/**
 * The web flavour of the glue, for workerd, workers and browsers: the
 * `.wasm` is imported as a module (a `WebAssembly.Module` in workerd and
 * bundlers) and instantiated synchronously with `initSync`, once, whichever
 * entry (`toolctx`, `toolctx/helpers`) imports it first.
 */
import {
  AivaxVerifier,
  Verifier,
  canonicalJson,
  initSync,
  qualifiedToolName,
  serverLabel,
  tuixIdempotencyKey,
} from './wasm/web/toolctx_wasm.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from './wasm/web/toolctx_wasm_bg.wasm';

initSync({ module: wasmModule as WebAssembly.Module });

export const glue = { Verifier, AivaxVerifier, canonicalJson, qualifiedToolName, serverLabel, tuixIdempotencyKey };
