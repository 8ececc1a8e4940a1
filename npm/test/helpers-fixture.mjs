// A stateless Streamable HTTP MCP server (the real SDK) behind the toolctx
// middleware, with tools built on toolctx/helpers. Used in-process by
// helpers.test.mjs and as a separate process by helpers-server.mjs.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { createVerifier, toolctx } from 'toolctx';
import { cancellable, idempotent, jsonResult, noticeCancelled, progress } from 'toolctx/helpers';
import { CREDENTIAL, INSTANCE, SECRET, runsServer, serveStateless } from './support.mjs';

/**
 * `store`: the idempotency store (default: the in-memory one);
 * `clock`: the progress helper's clock; `waitMs`: how long a duplicate waits.
 * Returns the node:http server and what its tools saw.
 */
export function helpersServer({ store, clock, waitMs = 10_000 } = {}) {
  const seen = { runs: 0, cancelled: [], started: [] };
  const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], credential: { header: 'authorization', values: [CREDENTIAL] } });

  // Wrapped once per process, not per request: the wrapper holds the store.
  const charge = cancellable(
    idempotent(
      async ({ orderId, amount, delayMs }) => {
        seen.runs += 1;
        const run = seen.runs;
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        return jsonResult({ orderId, amount, chargedBy: process.pid, run });
      },
      { ...(store ? { store } : {}), waitMs },
    ),
  );
  const report = async ({ steps, stepMs }, extra) => {
    const send = progress(extra, clock ? { clock } : {});
    for (let i = 1; i <= steps; i++) {
      clock?.advance(stepMs);
      await send(i, steps, `step ${i}`);
    }
    return { content: [{ type: 'text', text: `sent ${send.sent} of ${steps}` }] };
  };
  const slow = cancellable(async ({ label }, extra) => {
    seen.started.push(label);
    const reason = await new Promise((resolve) => {
      if (extra.signal.aborted) resolve(extra.signal.reason);
      extra.signal.addEventListener('abort', () => resolve(extra.signal.reason), { once: true });
    });
    seen.cancelled.push({ label, reason });
    return { content: [{ type: 'text', text: 'stopped' }] };
  });

  function mcpServer() {
    const server = new McpServer({ name: 'toolctx-helpers', version: '1.0.0' });
    server.registerTool('charge', { inputSchema: { orderId: z.string(), amount: z.number(), delayMs: z.number().optional() } }, charge);
    server.registerTool('report', { inputSchema: { steps: z.number(), stepMs: z.number() } }, report);
    server.registerTool('slow', { inputSchema: { label: z.string() } }, slow);
    return server;
  }

  const middleware = toolctx(verifier);
  const http = runsServer(seen, middleware, (req, res) => {
    // A notifications/cancelled arrives in its own POST, at another server instance.
    noticeCancelled(req.body, req.headers);
    return serveStateless(mcpServer(), req, res);
  });
  return { http, seen };
}
