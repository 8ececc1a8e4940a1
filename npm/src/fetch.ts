import { rememberContext } from './context.js';
import type { Reject } from './types.js';
import type { Verifier } from './verifier.js';

export interface FetchOptions {
  /** The clock, in Unix seconds; defaults to `Math.floor(Date.now() / 1000)`. */
  now?: () => number;
}

/**
 * Wraps a fetch-style handler `(request, ...rest) => Response` (Hono's
 * `app.fetch`, the MCP SDK's web-standard transport, a worker's `fetch`).
 * Refusals are answered here; otherwise the inner handler gets a Request
 * re-created with the already-read body (and the same `...rest`), and
 * `contextFrom(request)` / `authInfoFrom(request)` give the verified context.
 */
export function withToolctx<A extends unknown[]>(
  verifier: Verifier,
  handler: (request: Request, ...rest: A) => Response | Promise<Response>,
  options: FetchOptions = {},
): (request: Request, ...rest: A) => Promise<Response> {
  const clock = options.now;
  return async function toolctxFetch(request: Request, ...rest: A): Promise<Response> {
    const head = verifier.checkHeaders({ method: request.method, headers: request.headers });
    if (head.outcome === 'pass') return handler(request, ...rest);
    if (head.outcome === 'reject') return refusal(head);
    const body = await readLimited(request, verifier.maxBodyBytes);
    const result = verifier.verify(
      { method: request.method, headers: request.headers, body },
      clock ? { now: clock() } : undefined,
    );
    if (result.outcome === 'reject') return refusal(result);
    const inner = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: body as Uint8Array<ArrayBuffer>,
      signal: request.signal,
    });
    if (result.outcome === 'accept') rememberContext(inner, result.context);
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
