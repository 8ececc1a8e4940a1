/**
 * Server helpers for verified calls (CONTRACT §5): idempotent retries,
 * progress at the platform's rate, result limits, cancellation, for workerd,
 * workers and browsers: Web Crypto, no Node built-ins; canonical JSON from
 * the core through the web flavour of the wasm (imported as a module, as the
 * `toolctx` worker entry does, and instantiated once for both).
 */
import { bindCore } from './core.js';
import { glue } from './core-web.js';

bindCore(glue);

export * from './helpers-common.js';
