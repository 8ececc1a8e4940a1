/**
 * Runs anywhere with fetch's `Request` and `Response` (workerd, workers,
 * browsers, Node 20+): the wrapper `withToolctx(verifier, handler)` for
 * fetch-style handlers. Exported by both entries through `api.ts`.
 */
import { rememberContext } from './context.js';
import { describerOf, entryOptions, RECORDED, Recorder, type TelemetryOptions } from './telemetry.js';
import { requireTuix } from './tuix.js';
import type { CallVerifier, Reject } from './types.js';
import { upstreamHeaders } from './upstream.js';

export interface FetchOptions extends TelemetryOptions {
  /** The clock, in Unix seconds; defaults to `Math.floor(Date.now() / 1000)`. */
  now?: () => number;
  /**
   * @deprecated Create the verifier with `forward: { tuix: true }`: the
   * wrapper applies what the verifier forwards (its `forward`) to the
   * Request it hands on. `true` only checks that the verifier forwards the
   * Tuix headers and throws `config_invalid` when it does not.
   */
  tuixHeaders?: boolean;
}

/**
 * Wraps a fetch-style handler `(request, ...rest) => Response` (Hono's
 * `app.fetch`, the MCP SDK's web-standard transport, a worker's `fetch`).
 * Refusals are answered here; otherwise the inner handler gets a Request
 * re-created with the already-read body (and the same `...rest`), and
 * `contextFrom(request)` / `authInfoFrom(request)` give the verified context.
 * What the verifier forwards (its `forward`: the verdict's `upstream`) is
 * applied to that Request: every copy of a forwarded header removed, then an
 * accepted call's headers set with the values the core encoded, ready to
 * send upstream.
 */
export function withToolctx<A extends unknown[], C = unknown>(
  verifier: CallVerifier<C>,
  handler: (request: Request, ...rest: A) => Response | Promise<Response>,
  options: FetchOptions = {},
): (request: Request, ...rest: A) => Promise<Response> {
  const clock = options.now;
  const key = verifier.contextKey ?? 'toolctx';
  if (options.tuixHeaders === true) requireTuix(verifier);
  // Unset here: the verifier's `telemetry` and `onVerdict`.
  const recorder = new Recorder(entryOptions(options, verifier), 'fetch');
  const describe = describerOf(verifier);
  return async function toolctxFetch(request: Request, ...rest: A): Promise<Response> {
    const started = recorder.start();
    // One headers object for both checks: `checked` holds for it alone.
    const received = request.headers;
    const head = verifier.checkHeaders({ method: request.method, headers: received, [RECORDED]: true } as { method: string; headers: Headers });
    if (head.outcome !== 'read_body') recorder.record(started, head);
    if (head.outcome === 'pass') {
      if (head.upstream === undefined || head.upstream.remove.length === 0) return handler(request, ...rest);
      // The body is not read here: it goes on as the stream it came as.
      const init: RequestInit & { duplex?: 'half' } = { headers: upstreamHeaders(request.headers, head.upstream) };
      if (request.body !== null) init.duplex = 'half';
      return handler(new Request(request, init), ...rest);
    }
    if (head.outcome === 'reject') return refusal(head);
    const body = await readLimited(request, verifier.maxBodyBytes);
    // `checked`: the core goes on from step 2 on the headers it checked.
    const input = { method: request.method, headers: received, body, checked: head, [RECORDED]: true };
    const when = clock ? { now: clock() } : undefined;
    // A replay guard with a shared store: the verdict is awaited.
    const result =
      verifier.verifiesAsync === true && verifier.verifyAsync ? await verifier.verifyAsync(input, when) : verifier.verify(input, when);
    if (started !== undefined) recorder.record(started, result, undefined, { method: request.method, body, describe });
    if (result.outcome === 'reject') return refusal(result);
    const up = result.upstream;
    const headers = up === undefined || up.remove.length === 0 ? request.headers : upstreamHeaders(request.headers, up);
    const inner = new Request(request.url, {
      method: request.method,
      headers,
      body: body as Uint8Array<ArrayBuffer>,
      signal: request.signal,
    });
    if (result.outcome === 'accept') rememberContext(inner, result.context, key);
    return handler(inner, ...rest);
  };
}

/** Reads at most `limit + 1` bytes and cancels the rest of the stream. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = limit + 1 - size;
    if (value.length >= room) {
      chunks.push(value.subarray(0, room));
      size += room;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

function refusal(r: Reject): Response {
  return new Response(r.body, { status: r.status, headers: { 'content-type': 'application/json' } });
}
