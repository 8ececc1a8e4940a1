/**
 * Runs in workerd, workers and browsers: `toolctx/helpers` (export
 * conditions `workerd`, `worker`, `browser`, and the default). Server
 * helpers for verified calls (CONTRACT §5): idempotent retries, progress at
 * the platform's rate, result limits, cancellation; Web Crypto, no Node
 * built-ins; canonical JSON from the core through the web flavour of the
 * conventions module (imported as a module and instantiated once, shared
 * with `toolctx/conventions`). The Node flavour is `../node/helpers.ts`.
 */
import './conventions-glue.js';

export * from '../helpers-common.js';
