/**
 * The Tuix upstream headers (CONTRACT §7) by name, and two helpers kept for
 * code written before the core decided what is forwarded: create the
 * verifier with `forward: { tuix: true }` and the middleware and the fetch
 * wrapper forward them (`upstream` on the verdict says what). Plain
 * TypeScript, no WebAssembly.
 */
import { ToolctxError } from './errors.js';
import type { CallVerifier, Upstream } from './types.js';
import { rememberedUpstream, upstreamHeaders } from './upstream.js';

/**
 * The Tuix upstream headers and the `_meta` members they carry (the core's
 * `TUIX_HEADERS`; npm/test/codes.test.mjs checks the two agree).
 */
export const TUIX_HEADERS: Readonly<Record<'sessionId' | 'idempotencyKey', string>> = Object.freeze({
  sessionId: 'X-Session-Id',
  idempotencyKey: 'X-Idempotency-Key',
});

/** The same names in lower case, as Node and fetch report them. */
export const TUIX_HEADER_NAMES: readonly string[] = Object.freeze(Object.values(TUIX_HEADERS).map((n) => n.toLowerCase()));

/**
 * @deprecated Read `upstream.set` of the verdict instead; the middleware
 * and the fetch wrapper apply it themselves. The Tuix headers the core
 * decided to forward for `message`, the parsed body (`req.body`) of a call
 * the Node middleware accepted from a verifier with `forward: { tuix: true }`,
 * values as the core encoded them; `{}` for anything else (it no longer
 * reads `_meta` itself).
 */
export function tuixHeaders(message: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const set = rememberedUpstream(message)?.set ?? [];
  for (const header of Object.values(TUIX_HEADERS)) {
    const found = set.find(([name]) => name === header.toLowerCase());
    if (found !== undefined) out[header] = found[1];
  }
  return out;
}

/**
 * @deprecated Use `upstreamHeaders(headers, verdict.upstream)`. A copy of
 * `headers` without the Tuix headers; with `set`, those headers added as
 * given.
 */
export function withoutTuixHeaders(headers: HeadersInit, set: Record<string, string> = {}): Headers {
  const upstream: Upstream = { remove: TUIX_HEADER_NAMES, set: Object.entries(set) };
  return upstreamHeaders(headers, upstream);
}

/** The deprecated `tuixHeaders: true` of the middleware and the fetch wrapper: the verifier must forward the Tuix headers. */
export function requireTuix(verifier: CallVerifier<unknown>): void {
  const removed = verifier.removedHeaders ?? [];
  if (!TUIX_HEADER_NAMES.every((name) => removed.includes(name))) {
    throw new ToolctxError(
      'config_invalid',
      'tuixHeaders: true needs a verifier that forwards the Tuix headers: create it with forward: { tuix: true }',
    );
  }
}
