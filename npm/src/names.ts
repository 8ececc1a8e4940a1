/**
 * The neighbouring conventions (CONTRACT §6 and §7): model-facing tool
 * names and the Tuix idempotency key, computed by the Rust core; the Tuix
 * upstream headers, read from an accepted call's `_meta`.
 */
import { jsonText, throughCore } from './canonical.js';
import { core } from './core.js';
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

/** The Tuix upstream headers and the `_meta` members they carry. */
export const TUIX_HEADERS: Readonly<Record<'sessionId' | 'idempotencyKey', string>> = Object.freeze({
  sessionId: 'X-Session-Id',
  idempotencyKey: 'X-Idempotency-Key',
});

/** The same names in lower case, as Node and fetch report them. */
export const TUIX_HEADER_NAMES: readonly string[] = Object.freeze(Object.values(TUIX_HEADERS).map((n) => n.toLowerCase()));

/** Printable ASCII without leading or trailing space: a value every HTTP stack forwards as is. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The Tuix upstream headers of an accepted call: `X-Session-Id` from
 * `_meta.sessionId` and `X-Idempotency-Key` from `_meta.idempotencyKey`.
 * `message` is the JSON-RPC `tools/call` request (the middleware's
 * `req.body`) or a tool handler's `extra`. A member that is missing, not a
 * string, or not printable ASCII gives no header.
 *
 * Only for a call the verifier accepted; the middleware and the fetch wrapper
 * do it themselves with `{ tuixHeaders: true }`, after removing the copies
 * the request arrived with.
 */
export function tuixHeaders(message: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const m = message as { params?: { _meta?: unknown }; _meta?: unknown } | null | undefined;
  if (m === null || typeof m !== 'object') return out;
  const meta = m.params !== undefined ? m.params?._meta : m._meta;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return out;
  for (const [member, header] of Object.entries(TUIX_HEADERS)) {
    const value = (meta as Record<string, unknown>)[member];
    if (typeof value === 'string' && HEADER_VALUE.test(value)) out[header] = value;
  }
  return out;
}

/**
 * A copy of `headers` without the Tuix headers, so that a caller cannot
 * spoof them through a proxy; with `set`, those headers added.
 */
export function withoutTuixHeaders(headers: HeadersInit, set: Record<string, string> = {}): Headers {
  const out = new Headers(headers);
  for (const name of TUIX_HEADER_NAMES) out.delete(name);
  for (const [name, value] of Object.entries(set)) out.set(name, value);
  return out;
}
