// A stateless Streamable HTTP MCP server (the real SDK) behind the toolctx
// middleware or the fetch wrapper, with the replay guard on. Used in-process
// by replay.test.mjs and as a separate process by replay-server.mjs.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { authInfoFrom, contextFrom, createVerifier, toolctx, withToolctx } from 'toolctx';
import { CREDENTIAL, INSTANCE, SECRET, handleStateless, runsServer, serveStateless } from './support.mjs';

/** The verifier the fixtures use, with `replayGuard` and any other options. */
export function replayVerifier(options) {
  return createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    credential: { header: 'authorization', values: [CREDENTIAL] },
    ...options,
  });
}

function mcpServer(seen) {
  const server = new McpServer({ name: 'toolctx-replay', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    seen.runs += 1;
    seen.jtis.push(contextFrom(extra)?.jti);
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

/**
 * A node:http server behind the middleware; `GET /runs` answers how often
 * the tool ran. Returns the server and what the tool saw.
 */
export function replayServer(verifier, options = {}) {
  const seen = { runs: 0, jtis: [] };
  const middleware = toolctx(verifier, options);
  const http = runsServer(seen, middleware, (req, res) => serveStateless(mcpServer(seen), req, res));
  return { http, seen };
}

/** The SDK's web-standard transport behind `withToolctx`: `(request) => Response`. */
export function replayFetchHandler(verifier, options = {}) {
  const seen = { runs: 0, jtis: [] };
  const handler = withToolctx(
    verifier,
    (request) => handleStateless(mcpServer(seen), request, authInfoFrom(request)),
    options,
  );
  return { handler, seen };
}

/**
 * A fetch for the SDK client that records the JSON-RPC id of every
 * `tools/call` it sends; `inner` sends it (the network, or a handler).
 */
export function recordingFetch(inner = fetch) {
  const ids = [];
  const fetchImpl = (url, init) => {
    if (typeof init?.body === 'string') {
      const message = JSON.parse(init.body);
      if (message.method === 'tools/call') ids.push(message.id);
    }
    return inner(url, init);
  };
  return { fetchImpl, ids };
}

/** The status and JSON-RPC error a refused call came back with through the SDK's transport. */
export async function refusedCall(client, params) {
  const err = await client.callTool(params).then(
    () => {
      throw new Error('the call was not refused');
    },
    (e) => e,
  );
  const text = String(err.message);
  return { status: err.code, json: JSON.parse(text.slice(text.indexOf('{'))) };
}
