// The convention harness inside workerd: one POST per case, `{ table }` (a
// model-facing name or a Tuix key, as npm/test/vectors.mjs's tableInput) or
// `{ aivax: { options, request } }`; answers `{ result }` or `{ error }`.
// Through the subpaths `toolctx/conventions` and `toolctx/aivax`, which
// load the second wasm module; `toolctx/helpers` shares it.
import { createAivaxVerifier } from 'toolctx/aivax';
import { qualifiedToolName, tuixIdempotencyKey } from 'toolctx/conventions';
import { canonicalJson } from 'toolctx/helpers';

const bytes = (v) => (typeof v === 'object' && v !== null && typeof v.b64 === 'string' ? Uint8Array.from(atob(v.b64), (c) => c.charCodeAt(0)) : v);

function table(input) {
  if (input.kind === 'name') return qualifiedToolName(input.instance, input.tool);
  const args = JSON.parse(input.arguments);
  // The helpers' canonical JSON is the same core function on the same instance.
  if (canonicalJson(args) !== canonicalJson(JSON.parse(canonicalJson(args)))) throw new Error('canonicalJson is not idempotent');
  return tuixIdempotencyKey({ sessionId: input.sessionId, turn: input.turn, tool: input.tool, arguments: args });
}

export default {
  async fetch(request) {
    const job = await request.json();
    if (job.table !== undefined) {
      try {
        return Response.json({ result: table(job.table) });
      } catch (e) {
        return Response.json({ error: `${e.name}: ${e.message}` });
      }
    }
    const { options, request: req } = job.aivax;
    let verifier;
    try {
      verifier = createAivaxVerifier(options);
    } catch (e) {
      return Response.json({ error: `config: ${e.message}` });
    }
    try {
      const result = verifier.verify({ method: req.method, headers: req.headers.map(([name, value]) => [name, bytes(value)]), body: bytes(req.body) });
      return Response.json({ result });
    } catch (e) {
      return Response.json({ error: `${e.name}: ${e.message}` });
    } finally {
      verifier.free();
    }
  },
};
