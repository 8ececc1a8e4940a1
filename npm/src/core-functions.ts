/**
 * Shared by both flavours: the core's plain functions (CONTRACT §6 and §7),
 * as one flavour of the conventions module's glue exports them. Each flavour
 * binds itself at import (`node/conventions-glue.ts`,
 * `web/conventions-glue.ts`); the first one bound is used. Nothing here
 * loads WebAssembly.
 */
import { ToolctxError } from './errors.js';

export interface CoreFunctions {
  qualifiedToolName(instanceName: string, tool: string): string;
  serverLabel(instanceName: string): string;
  /** RFC 8785 over a JSON text; throws `"<code>\n<message>"`. */
  canonicalJson(text: string): string;
  tuixIdempotencyKey(sessionId: string, turn: string, tool: string, argumentsJson: string): string;
}

let bound: CoreFunctions | undefined;

export function bindCore(functions: CoreFunctions): void {
  bound ??= functions;
}

export function core(): CoreFunctions {
  if (bound === undefined) throw new ToolctxError('internal', 'the conventions module is not loaded: import toolctx/conventions');
  return bound;
}
