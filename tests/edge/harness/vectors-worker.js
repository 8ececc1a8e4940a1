// The vector harness inside workerd: one POST per case, carrying the
// createVerifier options, the request as `verify` takes it and the case's
// `now`; answers `{ result }` (verify's result) or `{ error }`. Bytes that are
// not a string (non-UTF-8 bodies, non-ASCII header values) travel as
// `{ b64 }` and are handed to the package as Uint8Array, as in Node. The
// verdict travels back as the package gave it: a number JSON cannot write
// (a context member of 1e400 is Infinity, -1.5E-400 is -0) goes as
// `{ $number: "Infinity" }`, which tests/edge/vectors.mjs turns back.
// With `forward: true` the case goes through the fetch wrapper instead
// (`withToolctx`, as a worker in front of an upstream uses it) and the
// answer is `{ forwarded }`: the headers of the Request it handed on, or
// `{ error }` when it refused.
import { createVerifier, withToolctx } from 'toolctx';

const wireNumber = (_, v) =>
  typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? { $number: Object.is(v, -0) ? '-0' : String(v) } : v;
const answer = (json) => new Response(JSON.stringify(json, wireNumber), { headers: { 'content-type': 'application/json' } });

const bytes = (v) => (typeof v === 'object' && v !== null && typeof v.b64 === 'string' ? Uint8Array.from(atob(v.b64), (c) => c.charCodeAt(0)) : v);
/** A header value as fetch holds it: one char per byte. */
const byteString = (v) => (typeof v === 'string' ? v : String.fromCharCode(...v));

/** The headers of the Request `withToolctx` hands on for `req`. */
async function forwarded(verifier, req, now) {
  let handed;
  const wrapped = withToolctx(verifier, (inner) => ((handed = [...inner.headers]), new Response('ok')), { now: () => now });
  const headers = new Headers();
  for (const [name, value] of req.headers) headers.append(name, byteString(bytes(value)));
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : bytes(req.body);
  const response = await wrapped(new Request('http://127.0.0.1/mcp', { method: req.method, headers, body }));
  if (handed === undefined) return { error: `the fetch wrapper refused: ${response.status} ${await response.text()}` };
  return { forwarded: handed };
}

export default {
  async fetch(request) {
    const { options, request: req, now, forward } = await request.json();
    let verifier;
    try {
      verifier = createVerifier(options);
    } catch (e) {
      return Response.json({ error: `config: ${e.message}` });
    }
    try {
      if (forward === true) return Response.json(await forwarded(verifier, req, now));
      const result = verifier.verify(
        { method: req.method, headers: req.headers.map(([name, value]) => [name, bytes(value)]), body: bytes(req.body) },
        { now },
      );
      return answer({ result });
    } catch (e) {
      return Response.json({ error: `${e.name}: ${e.message}` });
    } finally {
      verifier.free();
    }
  },
};
