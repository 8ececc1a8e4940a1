// Test support shared by the integration and helpers tests: tokens minted by
// hand with node:crypto (not with toolctx's own minting code), and SDK v1's
// server transport and real client on 127.0.0.1 (both SDK lines: sdks.mjs).
import { createHmac, randomUUID } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export const SECRET = 'integration-test-secret-0123456789-abcdef';
export const INSTANCE = '0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f';
export const CREDENTIAL = 'Bearer static-credential-1';

const b64url = (s) => Buffer.from(s).toString('base64url');

/** HS256 compact JWS by hand. */
export function mint(claims, secret = SECRET) {
  const signed = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

/**
 * A token and the matching `_meta` for one call. Pass the `ctx` of an earlier
 * call to mint a retry: the same context with a new token.
 */
export function callContext({ tool = 'echo', iat = Math.floor(Date.now() / 1000), overrideMeta = {}, ctx } = {}) {
  if (!ctx) {
    ctx = {
      protocol: '1',
      task_id: randomUUID(),
      tool_call_id: `call_${randomUUID().slice(0, 8)}`,
      workspace_id: randomUUID(),
      agent_id: randomUUID(),
      end_user_id: 'user-42',
    };
    ctx.idempotency_key = `${ctx.task_id}:${ctx.tool_call_id}`;
  }
  const token = mint({ iss: 'agentarea', aud: INSTANCE, iat, exp: iat + 300, jti: randomUUID(), tool, ...ctx });
  const meta = { progressToken: 'progress-1' };
  for (const [k, v] of Object.entries(ctx)) meta[`agentarea/${k}`] = v;
  return { ctx, token, meta: { ...meta, ...overrideMeta } };
}

/** Listens on a free port of 127.0.0.1; resolves to the `/mcp` URL. */
export function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/mcp`)));
}

export function stop(server) {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

/**
 * The stateless pattern: `server` (new per request) on a new transport, both
 * closed with the response; `body` is the request's JSON-RPC, already parsed.
 */
export async function serveStateless(server, req, res, body = req.body) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** The SDK's real Client over Streamable HTTP, with fixed request headers. */
export async function connect(url, headers, fetchImpl) {
  const client = new Client({ name: 'toolctx-test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  await client.connect(transport);
  return client;
}

/**
 * A clock whose time moves only when told: `advance(ms)` runs the timers
 * that fall due, in order. Shaped like toolctx/helpers' `Clock`.
 */
export function fakeClock() {
  let t = 0;
  const timers = [];
  return {
    now: () => t,
    setTimeout(fn, ms) {
      const timer = { at: t + ms, fn };
      timers.push(timer);
      return timer;
    },
    clearTimeout(timer) {
      const i = timers.indexOf(timer);
      if (i >= 0) timers.splice(i, 1);
    },
    advance(ms) {
      const end = t + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        if (timers.length === 0 || timers[0].at > end) break;
        const next = timers.shift();
        t = next.at;
        next.fn();
      }
      t = end;
    },
    get pending() {
      return timers.length;
    },
  };
}
