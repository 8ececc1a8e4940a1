/**
 * Runs in Node: the verifier's wasm-bindgen glue (crates/wasm), Node flavour.
 * The WebAssembly module loads synchronously at import. The web flavour is
 * `../web/glue.ts`.
 */
import {
  Verifier,
  describeRequest,
  wasmMemory,
  redisClaimAnswer,
  redisClaimArgs,
  redisKeyPrefix,
  redisTimeoutMs,
} from '../wasm/node/toolctx_wasm.js';

export const glue = {
  Verifier,
  /** The module's memory, where a verifier takes its requests and leaves its answers. */
  memory: wasmMemory() as WebAssembly.Memory,
  describeRequest, redisClaimArgs, redisKeyPrefix, redisClaimAnswer, redisTimeoutMs };
