/**
 * Runs in workerd, workers and browsers: `toolctx/conventions` (export
 * conditions `workerd`, `worker`, `browser`, and the default). The
 * conventions module's `.wasm` is imported as a module and instantiated with
 * `initSync`. Model-facing tool names, canonical JSON (RFC 8785) and the Tuix
 * key, from the Rust core through the second WebAssembly module; the Tuix
 * headers. The Node flavour is `../node/conventions.ts`.
 */
import './conventions-glue.js';

export { canonicalJson } from '../canonical.js';
export { qualifiedToolName, serverLabel, tuixIdempotencyKey, type TuixKeyInput } from '../names.js';
export { tuixHeaders, withoutTuixHeaders, TUIX_HEADERS, TUIX_HEADER_NAMES } from '../tuix.js';
export { ToolctxError, type ToolctxErrorCode } from '../errors.js';
