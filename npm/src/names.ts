/**
 * The neighbouring conventions (CONTRACT §6 and §7): model-facing tool
 * names and the Tuix idempotency key, computed by the Rust core through the
 * second WebAssembly module (crates/wasm-conventions), which the entries
 * `toolctx/conventions`, `toolctx/aivax` and `toolctx/helpers` load and bind
 * (`core-functions.ts`). The Tuix upstream headers need no WebAssembly: `tuix.ts`.
 */
import { jsonText, throughCore } from './canonical.js';
import { core } from './core-functions.js';
import { ToolctxError } from './errors.js';

export { canonicalJson } from './canonical.js';

const LONE_SURROGATE = /\p{Surrogate}/u;

function text(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new ToolctxError('invalid_argument', `${name} must be a string`);
  // The boundary carries UTF-8, which has no lone surrogate: refuse rather than replace it.
  if (LONE_SURROGATE.test(value)) throw new ToolctxError('invalid_argument', `${name} holds a lone surrogate`);
  return value;
}

/**
 * The name a model sees for `tool` on the instance named `instanceName`:
 * `mcp__<server>__<tool>`, at most 64 characters (CONTRACT §6; the tables
 * and rules are in crates/core/src/names.rs).
 *
 * ```ts
 * qualifiedToolName('My GitHub!', 'create_issue'); // 'mcp__my_github___create_issue'
 * ```
 */
export function qualifiedToolName(instanceName: string, tool: string): string {
  return core().qualifiedToolName(text(instanceName, 'instanceName'), text(tool, 'tool'));
}

/** `<server>` of the model-facing name: `serverLabel('My GitHub!')` is `'my_github_'`. */
export function serverLabel(instanceName: string): string {
  return core().serverLabel(text(instanceName, 'instanceName'));
}

/** What the Tuix idempotency key is computed over. */
export interface TuixKeyInput {
  sessionId: string;
  /** The turn (message) id. */
  turn: string;
  tool: string;
  /** The call's arguments (any JSON value; absent is `{}`). */
  arguments?: unknown;
}

/**
 * The Tuix idempotency key (CONTRACT §7), computed by the core: lowercase hex
 * SHA-256 of the RFC 8785 canonical form of
 * `{"arguments": A, "sessionId": S, "tool": T, "turn": U}`, where `A` is the
 * arguments without their top-level members that are `null` or `""`. Member
 * order never changes the key; any other change does. Throws a `TypeError`
 * for arguments with no JSON form (as `canonicalJson`).
 */
export function tuixIdempotencyKey(input: TuixKeyInput): string {
  if (input === null || typeof input !== 'object') throw new ToolctxError('invalid_argument', 'tuixIdempotencyKey needs { sessionId, turn, tool, arguments }');
  const sessionId = text(input.sessionId, 'sessionId');
  const turn = text(input.turn, 'turn');
  const tool = text(input.tool, 'tool');
  const args = jsonText(input.arguments === undefined ? {} : input.arguments, 'tuixIdempotencyKey');
  return throughCore('tuixIdempotencyKey', () => core().tuixIdempotencyKey(sessionId, turn, tool, args));
}
