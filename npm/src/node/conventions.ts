/**
 * Runs in Node: `toolctx/conventions` (export condition `node`). The
 * conventions module loads synchronously at import. Model-facing tool names,
 * canonical JSON (RFC 8785) and the Tuix key, from the Rust core through the
 * second WebAssembly module; the Tuix headers. The web flavour is
 * `../web/conventions.ts`.
 */
import './conventions-glue.js';

export { canonicalJson } from '../canonical.js';
export { qualifiedToolName, serverLabel, tuixIdempotencyKey, type TuixKeyInput } from '../names.js';
export { tuixHeaders, withoutTuixHeaders, TUIX_HEADERS, TUIX_HEADER_NAMES } from '../tuix.js';
export { ToolctxError, type ToolctxErrorCode } from '../errors.js';
