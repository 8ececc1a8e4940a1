/**
 * The core's plain functions (CONTRACT §6 and §7), as one flavour of the
 * wasm-bindgen glue exports them. Each entry point binds its own flavour at
 * import (`core-node.ts`, `core-web.ts`); the first one bound is used.
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
  if (bound === undefined) throw new ToolctxError('internal', 'the WebAssembly core is not loaded');
  return bound;
}
