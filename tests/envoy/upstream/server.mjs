// A minimal MCP server behind Envoy in the end-to-end tests: stateless
// Streamable HTTP, one tool that reports the headers the filter forwarded.
// It knows nothing of toolctx. GET /__stats (sent directly, never through
// Envoy) tells how many requests reached it, so a test can prove that a
// refused call never arrived.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const port = Number(process.argv[2] || 0);
const TUIX = ['x-session-id', 'x-idempotency-key'];
const stats = { requests: 0, calls: [], last: {} };

function newServer() {
  const server = new McpServer({ name: 'toolctx-envoy-upstream', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'Echoes the verified context headers', inputSchema: { note: z.string().optional() } },
    async (args, extra) => {
      const headers = extra.requestInfo?.headers ?? {};
      const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('x-toolctx-')));
      // The Tuix names the filter can write from verified _meta members.
      const meta = Object.fromEntries(Object.entries(headers).filter(([k]) => TUIX.includes(k)));
      const call = { note: args.note ?? null, headers: forwarded, meta };
      stats.calls.push(call);
      return { content: [{ type: 'text', text: JSON.stringify(call) }] };
    },
  );
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  stats.requests += 1;
  stats.last = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-toolctx-')));
  stats.lastMeta = Object.fromEntries(Object.entries(req.headers).filter(([k]) => TUIX.includes(k)));
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try {
    body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
    return;
  }
  // Stateless: a new server and transport per request, closed with it.
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
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
});

httpServer.listen(port, '127.0.0.1', () => {
  console.log(`listening ${httpServer.address().port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
// Stop with the test driver even if it dies without a word.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
