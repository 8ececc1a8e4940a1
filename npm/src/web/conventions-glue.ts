/**
 * Runs in workerd, workers and browsers: the conventions module's glue
 * (crates/wasm-conventions), web flavour. The second `.wasm` is imported as
 * a module and instantiated synchronously with `initSync`, once, whichever
 * entry (`toolctx/conventions`, `toolctx/aivax`, `toolctx/helpers`) imports
 * it first; then the core's plain functions are bound
 * (`../core-functions.ts`). The Node flavour is `../node/conventions-glue.ts`.
 */
import { bindCore } from '../core-functions.js';
import {
  AivaxVerifier,
  canonicalJson,
  checkResult,
  describeRequest,
  initSync,
  ProgressCoalescer,
  qualifiedToolName,
  resultLimits,
  serverLabel,
  tuixIdempotencyKey,
  idemStoreKey,
  idemRedisKey,
  idemArgumentHash,
  idemRunning,
  idemDone,
  idemReadEntry,
  idemHeld,
  idemWait,
  idemRefusal,
  idemRedisClaimArgs,
  idemRedisReadArgs,
  idemRedisCompleteArgs,
  idemRedisReleaseArgs,
  idemRedisMeaning,
  idemDefaults,
} from '../wasm/web/toolctx_wasm_conventions.js';
// @ts-ignore -- a .wasm import is a WebAssembly.Module where this entry runs
import wasmModule from '../wasm/web/toolctx_wasm_conventions_bg.wasm';

initSync({ module: wasmModule as WebAssembly.Module });

export const glue = {
  AivaxVerifier,
  canonicalJson,
  checkResult,
  describeRequest,
  ProgressCoalescer,
  qualifiedToolName,
  resultLimits,
  serverLabel,
  tuixIdempotencyKey,
  idemStoreKey,
  idemRedisKey,
  idemArgumentHash,
  idemRunning,
  idemDone,
  idemReadEntry,
  idemHeld,
  idemWait,
  idemRefusal,
  idemRedisClaimArgs,
  idemRedisReadArgs,
  idemRedisCompleteArgs,
  idemRedisReleaseArgs,
  idemRedisMeaning,
  idemDefaults,
};

bindCore(glue);
