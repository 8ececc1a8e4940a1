/** The Node flavour of the glue: the WebAssembly module loads synchronously at import. */
import {
  AivaxVerifier,
  Verifier,
  canonicalJson,
  qualifiedToolName,
  serverLabel,
  tuixIdempotencyKey,
} from './wasm/node/toolctx_wasm.js';

export const glue = { Verifier, AivaxVerifier, canonicalJson, qualifiedToolName, serverLabel, tuixIdempotencyKey };
