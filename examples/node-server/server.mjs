// An MCP server (stateless Streamable HTTP) whose tools/call requests are
// verified by the toolctx npm package before any tool runs. It is the server
// of `./scripts/demo` and of the command line's integration tests.
//
//   TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... node server.mjs [--port N]
//
// Options:
//   --port N          listen on 127.0.0.1:N (default $PORT, else a free port)
//   --no-verify       no toolctx at all: the unprotected copy that the demo
//                     puts behind Envoy and its filter
//   --json-response   answer with application/json instead of an SSE stream
//                     (the SDK then drops progress notifications)
//   --exit-with-stdin exit when standard input closes (test drivers)
//
// Environment: TOOLCTX_INSTANCE_ID and TOOLCTX_SECRET (required unless
// --no-verify), TOOLCTX_SECRET_PREVIOUS (optional, accepted too: rotation),
// TOOLCTX_CREDENTIAL (optional static credential in `authorization`).
//
// Tools: get_order, export_report (sends progress), whoami (what this server
// saw: the verified context and the x-toolctx-* headers a proxy added) and
// toolctx_probe (how many times it ran, for `toolctx conformance`).
// Prints `listening http://127.0.0.1:PORT/mcp` once it accepts connections.
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { contextFrom, createVerifier, toolctx } from 'toolctx';
import { progress } from 'toolctx/helpers';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const port = Number(option('--port') ?? process.env.PORT ?? 0);
const verify = !flag('--no-verify');
const jsonResponse = flag('--json-response');

// Process-wide, across the per-request servers: the probe's run count.
let probeRuns = 0;

function newServer() {
  const server = new McpServer({ name: 'toolctx-example', version: '1.0.0' });

  server.registerTool(
    'get_order',
    {
      description: 'Looks up an order; says which task asked for it',
      inputSchema: { orderId: z.string() },
    },
    async ({ orderId }, extra) => {
      const ctx = contextFrom(extra);
      const who = ctx ? `task ${ctx.task_id}${ctx.end_user_id ? ` for ${ctx.end_user_id}` : ''}` : 'no verified context';
      return { content: [{ type: 'text', text: `order ${orderId}: 2 items, shipped (${who})` }] };
    },
  );

  server.registerTool(
    'export_report',
    {
      description: 'Exports a report page by page, reporting progress',
      inputSchema: { pages: z.number().int().min(1).max(20).default(3) },
    },
    async ({ pages }, extra) => {
      // Sends at the platform's relay rate (one per 0.5 s) and always the last.
      const report = progress(extra);
      for (let page = 1; page <= pages; page += 1) {
        await new Promise((resolve) => setTimeout(resolve, 550));
        if (extra.signal.aborted) throw new Error('cancelled');
        await report(page, pages, `page ${page} of ${pages}`);
      }
      return { content: [{ type: 'text', text: `exported ${pages} pages` }] };
    },
  );

  server.registerTool(
    'whoami',
    { description: 'What this server saw: the verified context and the x-toolctx-* headers a proxy added', inputSchema: {} },
    async (_args, extra) => {
      const headers = extra.requestInfo?.headers ?? {};
      const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('x-toolctx-')));
      const saw = { verified_here: verify, context: contextFrom(extra) ?? null, proxy_headers: forwarded };
      return { content: [{ type: 'text', text: JSON.stringify(saw) }], structuredContent: saw };
    },
  );

  // The conformance probe: how many times it ran in this process, this run
  // included. `toolctx conformance` reads it around every refused call to
  // prove the call never ran.
  server.registerTool(
    'toolctx_probe',
    {
      description: 'Counts its own runs (toolctx conformance probe)',
      inputSchema: {},
      outputSchema: { runs: z.number().int() },
    },
    async () => {
      probeRuns += 1;
      const out = { runs: probeRuns };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  return server;
}

// Stateless Streamable HTTP: a new server and transport per request, closed
// with the response (or `extra.signal` never fires). Responses to tools/call
// are SSE streams, so progress arrives as it is sent, unless --json-response.
async function serveMcp(req, res, body) {
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: jsonResponse });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(e) } }));
    }
  }
}

let handle;
if (verify) {
  const secrets = [process.env.TOOLCTX_SECRET, process.env.TOOLCTX_SECRET_PREVIOUS].filter(Boolean);
  const credential = process.env.TOOLCTX_CREDENTIAL
    ? { header: 'authorization', values: [process.env.TOOLCTX_CREDENTIAL] }
    : undefined;
  // Throws a ToolctxError naming the problem (never the secret) on a bad configuration.
  const verifier = createVerifier({ instanceId: process.env.TOOLCTX_INSTANCE_ID, secrets, credential });
  const middleware = toolctx(verifier);
  handle = (req, res) => middleware(req, res, (err) => {
    if (err) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } }));
      return;
    }
    serveMcp(req, res, req.body);
  });
} else {
  handle = async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let body;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    serveMcp(req, res, body);
  };
}

const httpServer = createServer(handle);
httpServer.listen(port, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp${verify ? '' : ' (verification off)'}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
if (flag('--exit-with-stdin')) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
