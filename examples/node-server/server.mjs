// An MCP server (MCP TypeScript SDK v2: @modelcontextprotocol/server 2.4.0
// and @modelcontextprotocol/node 2.1.2) whose tools/call requests are
// verified by the toolctx npm package before any tool runs. It is the server
// of `./scripts/demo` and of the command line's integration tests;
// server-v1.mjs is the same on SDK 1.x.
//
//   TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... node server.mjs [--port N]
//
// Options (--port, --no-verify, --context-optional, --json-response,
// --exit-with-stdin), environment and tools: see common.mjs.
//
// The toolctx middleware reads and verifies the body, then hands the request
// to `toNodeHandler(createMcpHandler(factory))`: a fresh server per request,
// for 2026-07-28 clients and, through the SDK's stateless fallback, for
// 2025-era ones. `req.auth` (the verified context) reaches the tools as
// `ctx.http.authInfo`, where `contextFrom(ctx)` finds it.
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { listen, options, registerTools } from './common.mjs';

// Where SDK v2 keeps them: `ctx.mcpReq.signal`, `ctx.http.req` (the web
// Request; its Headers iterate as lower-case [name, value] pairs).
const view = {
  signal: (ctx) => ctx.mcpReq.signal,
  headers: (ctx) => ctx.http?.req?.headers ?? [],
};

function newServer() {
  const server = new McpServer({ name: 'toolctx-example', version: '1.0.0' });
  registerTools(server, view);
  return server;
}

// 2025-era requests with --json-response: the SDK's stateless fallback always
// streams, so they are served here, statelessly too, with JSON answers.
async function legacyJson(request, requestOptions) {
  if (request.method.toUpperCase() !== 'POST') {
    return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } }, { status: 405 });
  }
  const server = newServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, requestOptions);
  } finally {
    transport.close();
    server.close();
  }
}

// Responses to a tools/call that reports progress are SSE streams, so
// progress arrives as it is sent, unless --json-response (`responseMode:
// 'json'` drops it, like SDK 1.x's `enableJsonResponse`).
let handler = createMcpHandler(newServer);
if (options.jsonResponse) {
  const modern = createMcpHandler(newServer, { responseMode: 'json', legacy: 'reject' });
  handler = {
    fetch: async (request, requestOptions) =>
      (await isLegacyRequest(request, requestOptions?.parsedBody))
        ? legacyJson(request, requestOptions)
        : modern.fetch(request, requestOptions),
  };
}
const nodeHandler = toNodeHandler(handler);
listen((req, res, body) => nodeHandler(req, res, body));
