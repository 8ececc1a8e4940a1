/**
 * Runs in workerd, workers and browsers: the entry `toolctx` under the
 * export conditions `workerd`, `worker` and `browser`, and `toolctx/worker`.
 * The verifier's `.wasm` is imported as a module (a `WebAssembly.Module` in
 * workerd and bundlers) and instantiated synchronously with `initSync`
 * (`./glue.ts`). The conventions and the AIVAX verifier are in a second
 * module, loaded only by `toolctx/conventions`, `toolctx/aivax` and
 * `toolctx/helpers`.
 */
import type { VerifierOptions } from '../types.js';
import { verifierFactory, type Verifier } from '../verifier.js';
import { bindReplayCore } from '../replay.js';
import { glue } from './glue.js';

export * from '../api.js';

// The replay stores take the core's command, reply reading and defaults from this module.
bindReplayCore(glue);

/**
 * Validates the configuration once and precomputes the HMAC keys; throws a
 * `ToolctxError` with a stable `code` on a bad configuration.
 */
export const createVerifier: (options: VerifierOptions) => Verifier = verifierFactory(glue.Verifier, glue.memory, glue.describeRequest);
