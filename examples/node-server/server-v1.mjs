// The example server on the MCP TypeScript SDK 1.x (@modelcontextprotocol/sdk
// 1.32.2): the same tools, options, environment and output as server.mjs
// (SDK v2), kept and tested so that servers still on the 1.x line have a
// working example. Stateless Streamable HTTP, every tools/call verified by
// the toolctx npm package before any tool runs.
//
//   TOOLCTX_INSTANCE_ID=... TOOLCTX_SECRET=... node server-v1.mjs [--port N]
//
// Options, environment and tools: see common.mjs.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listen, options, registerTools } from './common.mjs';

// Where SDK 1.x keeps them: `extra.signal`, `extra.requestInfo.headers` (a
// record with lower-case names).
const view = {
  signal: (extra) => extra.signal,
  headers: (extra) => Object.entries(extra.requestInfo?.headers ?? {}),
};

// Stateless Streamable HTTP: a new server and transport per request, closed
// with the response (or `extra.signal` never fires). Responses to tools/call
// are SSE streams, so progress arrives as it is sent, unless --json-response.
listen(async (req, res, body) => {
  const server = new McpServer({ name: 'toolctx-example', version: '1.0.0' });
  registerTools(server, view);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: options.jsonResponse,
  });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});
