// toolctx at the edge: a Cloudflare Worker in front of an MCP server. Every
// request goes through toolctx's fetch wrapper: a `tools/call` whose signed
// context does not verify is answered here with the core's JSON-RPC refusal
// and never crosses to the origin; everything else (verified calls,
// `initialize`, `tools/list`, notifications, GET streams, DELETE) is proxied
// to ORIGIN_URL unchanged, responses streamed back as they come (SSE).
//
// Bindings: ORIGIN_URL and TOOLCTX_INSTANCE_ID (vars in wrangler.jsonc),
// TOOLCTX_SECRET and, during a rotation, TOOLCTX_SECRET_NEXT (secrets);
// TOOLCTX_TUIX "1" (optional) turns the Tuix headers on (`forward: { tuix: true }`:
// X-Session-Id and X-Idempotency-Key set from an accepted call's _meta,
// spoofed copies removed).
import { createVerifier, withToolctx } from 'toolctx';

/** Built on the first request: bindings are fixed for the life of an isolate. */
let handler;

export default {
  async fetch(request, env, ctx) {
    if (handler === undefined) {
      try {
        handler = fromBindings(env);
      } catch (e) {
        // A ToolctxError names the setting (`secret_length`, `instance_id_empty`, ...), never a secret's value.
        console.error(`toolctx configuration: ${e.code ?? 'error'}: ${e.message}`);
        return Response.json(
          { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'edge verifier misconfigured' } },
          { status: 500 },
        );
      }
    }
    return handler(request, env, ctx);
  },
};

function fromBindings(env) {
  const origin = new URL(env.ORIGIN_URL);
  const verifier = createVerifier({
    instanceId: env.TOOLCTX_INSTANCE_ID,
    secrets: [env.TOOLCTX_SECRET, env.TOOLCTX_SECRET_NEXT].filter((s) => s !== undefined && s !== ''),
    ...(env.TOOLCTX_TUIX === '1' && { forward: { tuix: true } }),
  });
  // One log line per refusal (wrangler tail shows it); never a token or secret.
  const onVerdict = (e) => {
    if (e.outcome === 'reject') console.warn(JSON.stringify({ msg: 'toolctx refused', reason: e.reason, status: e.status, id: e.requestId, tool: e.tool }));
  };
  return withToolctx(verifier, (request) => proxy(request, origin), { onVerdict });
}

/** The same method, headers and body, to the origin's URL plus this request's path and query. */
function proxy(request, origin) {
  const url = new URL(request.url);
  const target = new URL(origin);
  target.pathname = origin.pathname.replace(/\/$/, '') + url.pathname;
  target.search = url.search;
  return fetch(new Request(target, request));
}
