// The vector harness inside workerd: one POST per case, carrying the
// createVerifier options, the request as `verify` takes it and the case's
// `now`; answers `{ result }` (verify's result) or `{ error }`. Bytes that are
// not a string (non-UTF-8 bodies, non-ASCII header values) travel as
// `{ b64 }` and are handed to the package as Uint8Array, as in Node. The
// verdict travels back as the package gave it: a number JSON cannot write
// (a context member of 1e400 is Infinity, -1.5E-400 is -0) goes as
// `{ $number: "Infinity" }`, which tests/edge/vectors.mjs turns back.
import { createVerifier } from 'toolctx';

const wireNumber = (_, v) =>
  typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? { $number: Object.is(v, -0) ? '-0' : String(v) } : v;
const answer = (json) => new Response(JSON.stringify(json, wireNumber), { headers: { 'content-type': 'application/json' } });

const bytes = (v) => (typeof v === 'object' && v !== null && typeof v.b64 === 'string' ? Uint8Array.from(atob(v.b64), (c) => c.charCodeAt(0)) : v);

export default {
  async fetch(request) {
    const { options, request: req, now } = await request.json();
    let verifier;
    try {
      verifier = createVerifier(options);
    } catch (e) {
      return Response.json({ error: `config: ${e.message}` });
    }
    try {
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
