/**
 * Runs in Node: the entry `toolctx` (export condition `node`, and the
 * default). The verifier's WebAssembly module loads synchronously at import
 * (`./glue.ts`). Workerd, workers and browsers get `../web/index.ts` through
 * the `exports` conditions. The conventions and the AIVAX verifier are in a
 * second module, loaded only by `toolctx/conventions`, `toolctx/aivax` and
 * `toolctx/helpers`.
 */
import type { VerifierOptions } from '../types.js';
import { verifierFactory, type Verifier } from '../verifier.js';
import { bindReplayCore } from '../replay.js';
import { glue } from './glue.js';
import './otel.js';

export * from '../api.js';

// The replay stores take the core's command, reply reading and defaults from this module.
bindReplayCore(glue);

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(glue.Verifier, glue.memory, glue.describeRequest);
