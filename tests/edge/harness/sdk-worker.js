// An MCP server running inside workerd itself: the SDK's web-standard
// Streamable HTTP transport (stateless, a server per request) behind the
// package's fetch wrapper, the way Hono or a plain Worker mounts it. The
// tool answers with the verified context it sees through contextFrom(extra).
// GET /runs tells how many times the tool ran; GET /verdicts what
// `onVerdict` heard (outcome and reason of each request, in order).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { authInfoFrom, contextFrom, createVerifier, withToolctx } from 'toolctx';
import { z } from 'zod';

let runs = 0;
const verdicts = [];
let handler;

async function mcp(request) {
  const server = new McpServer({ name: 'in-workerd', version: '1.0.0' });
  server.registerTool('whoami', { inputSchema: { note: z.string() } }, async ({ note }, extra) => {
    runs++;
    const context = contextFrom(extra);
    return { content: [{ type: 'text', text: JSON.stringify({ note, task_id: context?.task_id ?? null, secret_index: context?.secret_index ?? null }) }] };
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(request, { authInfo: authInfoFrom(request) });
}

export default {
  fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    if (path === '/runs') return Response.json({ runs });
    if (path === '/verdicts') return Response.json(verdicts);
    const onVerdict = ({ outcome, reason, requestId, entry }) => verdicts.push({ outcome, reason, requestId, entry });
    handler ??= withToolctx(createVerifier({ instanceId: env.TOOLCTX_INSTANCE_ID, secrets: [env.TOOLCTX_SECRET] }), mcp, { onVerdict });
    return handler(request, env, ctx);
  },
};
