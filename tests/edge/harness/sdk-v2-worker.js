// An MCP server on SDK v2 (@modelcontextprotocol/server) running inside
// workerd: createMcpHandler's fetch face behind the package's fetch wrapper,
// as the README's SDK v2 section wires it for Workers. createMcpHandler
// serves 2026-07-28 clients and, through its stateless fallback, 2025 ones.
//
// Bundled with the `workerd`/`worker` export conditions, so `toolctx` and
// `toolctx/helpers` are the package's web entries (dist/web/) and the SDK's
// own `@modelcontextprotocol/server/_shims` is its shimsWorkerd (the
// @cfworker/json-schema validator, no Node built-ins): no compatibility flag
// is needed, `nodejs_compat` included.
//
// Tools:
// - whoami, and the same under a non-ASCII name (NON_ASCII_TOOL): the
//   verified context as contextFrom(ctx) reads it, and the Mcp-Name header
//   the call came with;
// - report: `steps` reports through progress(ctx) (default rate, 500 ms);
// - charge: idempotent (the in-memory store, one per isolate), taking
//   `delayMs` before it answers.
// Each counts in `runs`; GET /runs tells how many times they ran.
//
// Bindings: TOOLCTX_INSTANCE_ID, TOOLCTX_SECRET, and TOOLCTX_REQUIRE_CONTEXT
// ("false": a call without any context reaches the tools unverified).
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { authInfoFrom, contextFrom, createVerifier, withToolctx } from 'toolctx';
import { idempotent, jsonResult, progress } from 'toolctx/helpers';
import { z } from 'zod';

// The non-ASCII tool name sdk-v2.test.mjs calls (a 2026-07-28 client sends it as Mcp-Name: =?base64?...?=).
const NON_ASCII_TOOL = 'prüfen_überweisung';

let runs = 0;

const whoami = async ({ note }, ctx) => {
  runs++;
  const context = contextFrom(ctx);
  return jsonResult({
    note,
    task_id: context?.task_id ?? null,
    tool_call_id: context?.tool_call_id ?? null,
    secret_index: context?.secret_index ?? null,
    mcp_name: ctx.http?.req?.headers.get('mcp-name') ?? null,
  });
};

const report = async ({ steps }, ctx) => {
  runs++;
  const send = progress(ctx);
  for (let i = 1; i <= steps; i++) await send(i, steps, `step ${i}`);
  return { content: [{ type: 'text', text: `sent ${send.sent} of ${steps}` }] };
};

// Wrapped once per isolate, not per request: the wrapper holds the store.
const charge = idempotent(async ({ orderId, amount, delayMs }) => {
  const run = ++runs;
  if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return jsonResult({ orderId, amount, run });
});

function server() {
  const s = new McpServer({ name: 'in-workerd-v2', version: '1.0.0' });
  for (const name of ['whoami', NON_ASCII_TOOL]) s.registerTool(name, { inputSchema: z.object({ note: z.string() }) }, whoami);
  s.registerTool('report', { inputSchema: z.object({ steps: z.number().int() }) }, report);
  s.registerTool('charge', { inputSchema: z.object({ orderId: z.string(), amount: z.number(), delayMs: z.number().optional() }) }, charge);
  return s;
}

let fetchHandler;

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/runs') return Response.json({ runs });
    // Built on the first request, which brings the bindings.
    if (!fetchHandler) {
      const verifier = createVerifier({
        instanceId: env.TOOLCTX_INSTANCE_ID,
        secrets: [env.TOOLCTX_SECRET],
        requireContext: env.TOOLCTX_REQUIRE_CONTEXT !== 'false',
      });
      const mcp = createMcpHandler(server);
      fetchHandler = withToolctx(verifier, (req) => mcp.fetch(req, { authInfo: authInfoFrom(req) }));
    }
    return fetchHandler(request, env, ctx);
  },
};
