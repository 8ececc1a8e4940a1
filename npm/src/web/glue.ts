/**
 * Runs in workerd, workers and browsers: the verifier's wasm-bindgen glue
 * (crates/wasm), web flavour. The `.wasm` is imported as a module (a
 * `WebAssembly.Module` in workerd and bundlers) and instantiated
 * synchronously with `initSync`, once. The Node flavour is `../node/glue.ts`.
 */
import {
  Verifier,
  describeRequest,
  initSync,
  wasmMemory,
  redisClaimAnswer,
  redisClaimArgs,
  redisKeyPrefix,
  redisTimeoutMs,
} from '../wasm/web/toolctx_wasm.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from '../wasm/web/toolctx_wasm_bg.wasm';

initSync({ module: wasmModule as WebAssembly.Module });

export const glue = {
  Verifier,
  /** The module's memory, where a verifier takes its requests and leaves its answers. */
  memory: wasmMemory() as WebAssembly.Memory,
  describeRequest, redisClaimArgs, redisKeyPrefix, redisClaimAnswer, redisTimeoutMs };
