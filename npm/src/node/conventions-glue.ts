/**
 * The Node flavour of the conventions module's glue (crates/wasm-conventions):
 * loads synchronously at import and binds the core's plain functions, once,
 * whichever entry (`toolctx/conventions`, `toolctx/aivax`, `toolctx/helpers`)
 * imports it first.
 */
import { bindCore } from '../core-functions.js';
import {
  AivaxVerifier,
  canonicalJson,
  qualifiedToolName,
  serverLabel,
  tuixIdempotencyKey,
} from '../wasm/node/toolctx_wasm_conventions.js';

export const glue = { AivaxVerifier, canonicalJson, qualifiedToolName, serverLabel, tuixIdempotencyKey };

bindCore(glue);
