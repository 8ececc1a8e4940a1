/**
 * The Tuix upstream headers (CONTRACT §7), read from an accepted call's
 * `_meta`: plain TypeScript, no WebAssembly, so the middleware and the fetch
 * wrapper use them from the main entry without loading the conventions module.
 */
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
