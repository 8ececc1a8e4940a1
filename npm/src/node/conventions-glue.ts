/**
 * Runs in Node: the conventions module's glue (crates/wasm-conventions),
 * Node flavour. Loads synchronously at import and binds the core's plain
 * functions (`../core-functions.ts`), once, whichever entry
 * (`toolctx/conventions`, `toolctx/aivax`, `toolctx/helpers`) imports it
 * first. The web flavour is `../web/conventions-glue.ts`.
 */
import { bindCore } from '../core-functions.js';
import {
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
} from '../wasm/node/toolctx_wasm_conventions.js';

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
