// The two MCP SDK lines the integration, helpers and replay suites run
// against, each described once: how to build a server with tools, each way
// of wiring it behind toolctx (the Node middleware or the fetch wrapper),
// and each client. A cell is one SDK, one wiring and one client; the suites
// loop over `cells` (or pick one by id, as the Redis replicas do through
// TOOLCTX_CELL) and name their describe blocks with `cell.label`, which
// npm/test/matrix.mjs reads back.
//
// - SDK v1: @modelcontextprotocol/sdk 1.32.2; its Client speaks the 2025
//   protocol.
// - SDK v2: @modelcontextprotocol/server 2.4.0 + @modelcontextprotocol/node
//   2.1.2 on the server; @modelcontextprotocol/client 2.4.0 pinned to
//   2026-07-28. createMcpHandler serves both eras from one factory (2025
//   clients through its stateless fallback), so its cells run with both
//   clients; NodeStreamableHTTPServerTransport is 2025-only (it does not
//   answer server/discover).
//
// Where the eras legitimately differ, the client adapter hides it:
// `refused` returns the HTTP status and the JSON-RPC error of a refusal
// however the client surfaced it, and `cancelledBy` says how a cancellation
// reaches the server ('notification': notifications/cancelled in its own
// POST; 'stream': the client closes the call's response stream).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { Client as ClientV2, ProtocolError, SdkHttpError, StreamableHTTPClientTransport as ClientTransportV2 } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION as V1_PROTOCOL } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as McpServerV2, createMcpHandler } from '@modelcontextprotocol/server';
import express from 'express';
import { z } from 'zod';

import { authInfoFrom, toolctx, withToolctx } from 'toolctx';
import { connect as connectV1, listen, serveStateless, stop } from './support.mjs';

const versionOf = (name) => JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;

export const MODERN_PROTOCOL = '2026-07-28';

/**
 * A tool, SDK-neutral: `shape` is the zod raw shape of its arguments,
 * `handler(args, extra)` gets the SDK's own second argument (v1's `extra`,
 * v2's `ctx`).
 * @typedef {{ name: string, description?: string, shape: Record<string, unknown>, handler: Function }} Tool
 */

/** The server side of each SDK line: an McpServer with `tools`, and where a tool handler finds `_meta` and the signal. */
export const sdks = {
  v1: {
    name: 'sdk v1',
    version: versionOf('@modelcontextprotocol/sdk'),
    mcpServer(name, tools) {
      const server = new McpServerV1({ name, version: '1.0.0' });
      for (const t of tools) server.registerTool(t.name, { description: t.description, inputSchema: t.shape }, t.handler);
      return server;
    },
    meta: (extra) => extra._meta,
    signal: (extra) => extra.signal,
  },
  v2: {
    name: 'sdk v2',
    version: `server ${versionOf('@modelcontextprotocol/server')} + node ${versionOf('@modelcontextprotocol/node')}`,
    mcpServer(name, tools) {
      const server = new McpServerV2({ name, version: '1.0.0' });
      for (const t of tools) server.registerTool(t.name, { description: t.description, inputSchema: z.object(t.shape) }, t.handler);
      return server;
    },
    meta: (ctx) => ctx.mcpReq._meta,
    signal: (ctx) => ctx.mcpReq.signal,
  },
};

/**
 * A node:http server: `GET /runs` answers `seen.runs` when `seen` is given;
 * every other request goes through `middleware`, then `onBody(req.body,
 * req.headers)` (before any SDK sees it), then `handle(req, res)`; a
 * failure is answered 500 with its text.
 */
function nodeServer({ middleware, seen, onBody }, handle) {
  return createServer((req, res) => {
    if (seen && req.method === 'GET' && req.url === '/runs') return answerRuns(res, seen);
    middleware(req, res, async (err) => {
      try {
        if (err) throw err;
        onBody?.(req.body, req.headers);
        await handle(req, res);
      } catch (e) {
        if (!res.headersSent) res.statusCode = 500;
        res.end(String(e));
      }
    });
  });
}

function answerRuns(res, seen) {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ runs: seen.runs }));
}

/** The same behind Express: the middleware mounted on `POST /mcp` before any body parser. */
function expressServer({ middleware, seen, onBody }, handle) {
  const app = express();
  if (seen) app.get('/runs', (req, res) => answerRuns(res, seen));
  app.post('/mcp', middleware, (req, res, next) => {
    onBody?.(req.body, req.headers);
    Promise.resolve(handle(req, res)).catch(next);
  });
  return createServer(app);
}

/** `withToolctx` around `inner(request)`, telling `onBody` the parsed body first. */
function fetchHandler({ verifier, options, onBody }, inner) {
  return withToolctx(
    verifier,
    async (request) => {
      if (onBody) onBody(await request.clone().json().catch(() => undefined), request.headers);
      return inner(request);
    },
    options,
  );
}

/**
 * The SDK v1 web-standard transport in SSE mode (progress reaches the
 * client), server and transport closed when the response stream ends or is
 * cancelled (the client went away), as `res.on('close')` does in Node.
 */
async function handleStreaming(server, request, authInfo) {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await transport.close();
    await server.close();
  };
  await server.connect(transport);
  const response = await transport.handleRequest(request, { authInfo });
  if (response.body === null) {
    await close();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        await close();
      } else controller.enqueue(value);
    },
    async cancel(reason) {
      await reader.cancel(reason);
      await close();
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

const nodeSpec = ({ verifier, options, seen, onBody }) => ({ middleware: toolctx(verifier, options), seen, onBody });
const mcpHandler = (spec) => createMcpHandler(() => sdks.v2.mcpServer(spec.name, spec.tools));

/** SDK v1 stateless (a new server and transport per request) behind `serve` (nodeServer, expressServer). */
const v1Stateless = (serve) => (spec) => ({
  http: serve(nodeSpec(spec), (req, res) => serveStateless(sdks.v1.mcpServer(spec.name, spec.tools), req, res)),
});

/** SDK v2's createMcpHandler through toNodeHandler, behind `serve` (nodeServer, expressServer). */
function v2NodeHandler(serve) {
  return (spec) => {
    const handler = mcpHandler(spec);
    const node = toNodeHandler(handler);
    return { http: serve(nodeSpec(spec), (req, res) => node(req, res, req.body)), close: () => handler.close() };
  };
}

/**
 * How each SDK line is put behind toolctx. `kind: 'node'` wirings build a
 * node:http server (`http(spec)`), `kind: 'fetch'` ones a fetch handler
 * (`fetch(spec)`); both return `{ ..., close }` for what they hold besides.
 * `spec`: `{ verifier, options, name, tools, seen, onBody }`.
 */
export const wirings = {
  'v1-node': {
    sdk: sdks.v1,
    name: 'StreamableHTTPServerTransport · node:http',
    kind: 'node',
    http: v1Stateless(nodeServer),
  },
  'v1-express': {
    sdk: sdks.v1,
    name: 'StreamableHTTPServerTransport · express',
    kind: 'node',
    http: v1Stateless(expressServer),
  },
  'v1-fetch': {
    sdk: sdks.v1,
    name: 'WebStandardStreamableHTTPServerTransport · withToolctx',
    kind: 'fetch',
    fetch: (spec) => ({
      handler: fetchHandler(spec, (request) => handleStreaming(sdks.v1.mcpServer(spec.name, spec.tools), request, authInfoFrom(request))),
    }),
  },
  'v2-handler-node': {
    sdk: sdks.v2,
    name: 'toNodeHandler(createMcpHandler) · node:http',
    kind: 'node',
    http: v2NodeHandler(nodeServer),
  },
  'v2-handler-express': {
    sdk: sdks.v2,
    name: 'toNodeHandler(createMcpHandler) · express',
    kind: 'node',
    http: v2NodeHandler(expressServer),
  },
  // A 2025-era transport (it does not answer server/discover): the 2025 client only.
  'v2-transport-node': {
    sdk: sdks.v2,
    name: 'NodeStreamableHTTPServerTransport · node:http',
    kind: 'node',
    http: (spec) => ({
      http: nodeServer(nodeSpec(spec), async (req, res) => {
        const server = sdks.v2.mcpServer(spec.name, spec.tools);
        const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      }),
    }),
  },
  'v2-handler-fetch': {
    sdk: sdks.v2,
    name: 'createMcpHandler · withToolctx',
    kind: 'fetch',
    fetch: (spec) => {
      const mcp = mcpHandler(spec);
      return { handler: fetchHandler(spec, (request) => mcp.fetch(request, { authInfo: authInfoFrom(request) })), close: () => mcp.close() };
    },
  },
};


/**
 * What a refusal came back as, from the HTTP error a client threw:
 * `{ status, json }`, or undefined when `err` is not one.
 */
function httpRefusal(err) {
  if (err instanceof SdkHttpError && typeof err.data?.text === 'string') return { status: err.data.status, json: JSON.parse(err.data.text) };
  // SDK v1's StreamableHTTPError: the status as `code`, the body after the message's prefix.
  if (typeof err?.code === 'number' && err.code >= 400 && String(err.message).includes('{')) {
    const text = String(err.message);
    return { status: err.code, json: JSON.parse(text.slice(text.indexOf('{'))) };
  }
  return undefined;
}

/**
 * A fetch that remembers the last non-2xx answer to a tools/call
 * (`{ status, json }`): a 2026-07-28 client hands a 400 whose JSON-RPC error
 * names its request to the caller as that error (a ProtocolError), without
 * the status.
 */
function refusalRecorder(inner = fetch) {
  const rec = { last: undefined };
  rec.fetch = async (url, init) => {
    const response = await inner(url, init);
    let method;
    try {
      method = typeof init?.body === 'string' ? JSON.parse(init.body).method : undefined;
    } catch {
      method = undefined;
    }
    if (method === 'tools/call' && !response.ok) {
      rec.last = { status: response.status, json: JSON.parse(await response.clone().text()) };
    }
    return response;
  };
  return rec;
}

/**
 * The clients, each wrapped to the same face: `callTool(params, { onprogress, signal })`,
 * `listTools()`, `close()`, `refused(params)`. `connect(url, headers, fetchImpl, { elicit })`:
 * `elicit(params)` answers the server's elicitation requests (2026-07-28 only,
 * where they ride a tool's `input_required` result).
 */
export const clients = {
  v1: {
    name: `client ${V1_PROTOCOL}`,
    protocol: V1_PROTOCOL,
    modern: false,
    cancelledBy: 'notification',
    async connect(url, headers, fetchImpl) {
      const client = await connectV1(url, headers, fetchImpl);
      return wrapClient({
        callTool: (params, options = {}) => client.callTool(params, undefined, options),
        listTools: () => client.listTools(),
        close: () => client.close(),
        refusal: httpRefusal,
      });
    },
  },
  'v2-modern': {
    name: `client ${MODERN_PROTOCOL}`,
    protocol: MODERN_PROTOCOL,
    modern: true,
    cancelledBy: 'stream',
    async connect(url, headers, fetchImpl, { elicit } = {}) {
      const rec = refusalRecorder(fetchImpl);
      const client = new ClientV2(
        { name: 'toolctx-test-client', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: MODERN_PROTOCOL } }, ...(elicit ? { capabilities: { elicitation: { form: {} } } } : {}) },
      );
      if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit(request.params));
      await client.connect(new ClientTransportV2(new URL(url), { requestInit: { headers }, fetch: rec.fetch }));
      return wrapClient({
        callTool: (params, options = {}) => client.callTool(params, options),
        listTools: () => client.listTools(),
        close: () => client.close(),
        refusal(err) {
          const http = httpRefusal(err);
          if (http) return http;
          if (!(err instanceof ProtocolError) || rec.last?.status !== 400) return undefined;
          // The in-band 400: the error the caller got must be the one on the wire.
          const { json } = rec.last;
          if (err.code !== json.error.code || JSON.stringify(err.data) !== JSON.stringify(json.error.data)) {
            throw new Error(`the client's error ${err.code} ${JSON.stringify(err.data)} is not the refusal on the wire ${JSON.stringify(json)}`);
          }
          return rec.last;
        },
      });
    },
  },
};

function wrapClient({ refusal, ...client }) {
  return {
    ...client,
    refusal,
    /** The status and JSON-RPC error a refused call came back with. */
    async refused(params) {
      const err = await client.callTool(params).then(
        () => {
          throw new Error('the call was not refused');
        },
        (e) => e,
      );
      const r = refusal(err);
      if (r === undefined) throw err;
      return r;
    },
  };
}

/**
 * A client that fails to connect, as `{ status, json }` of its refusal.
 * @param {typeof clients[keyof typeof clients]} clientKind
 */
export async function refusedConnect(clientKind, url, headers, fetchImpl) {
  const err = await clientKind.connect(url, headers, fetchImpl).then(
    async (c) => {
      await c.close();
      throw new Error('connected');
    },
    (e) => e,
  );
  const r = httpRefusal(err);
  if (r === undefined) throw err;
  return r;
}

/**
 * A Response from `handler` as fetch would give it: the call's own signal,
 * when aborted (the client closed), cancels the response body, as a dropped
 * connection does.
 */
export function inProcessFetch(handler) {
  return async (url, init) => {
    const response = await handler(new Request(url, init));
    const signal = init?.signal;
    if (response.body === null || !signal) return response;
    const reader = response.body.getReader();
    let settled = false;
    const body = new ReadableStream({
      start(controller) {
        signal.addEventListener(
          'abort',
          () => {
            if (settled) return;
            settled = true;
            controller.error(signal.reason);
            reader.cancel(signal.reason).catch(() => undefined);
          },
          { once: true },
        );
      },
      async pull(controller) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (e) {
          if (!settled) controller.error(e);
          settled = true;
          return;
        }
        if (settled) return;
        if (chunk.done) {
          settled = true;
          controller.close();
        } else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        settled = true;
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function cell(wiringId, clientId) {
  const wiring = wirings[wiringId];
  const client = clients[clientId];
  return {
    id: `${wiringId}:${clientId}`,
    label: `${wiring.sdk.name} · ${wiring.name} · ${client.name}`,
    sdk: wiring.sdk,
    wiring,
    client,
  };
}

/** Every cell: each wiring with each client its SDK line serves. */
export const cells = [
  cell('v1-node', 'v1'),
  cell('v1-express', 'v1'),
  cell('v1-fetch', 'v1'),
  cell('v2-handler-node', 'v1'),
  cell('v2-handler-node', 'v2-modern'),
  cell('v2-handler-express', 'v1'),
  cell('v2-handler-express', 'v2-modern'),
  cell('v2-transport-node', 'v1'),
  cell('v2-handler-fetch', 'v1'),
  cell('v2-handler-fetch', 'v2-modern'),
];

export const cellById = (id) => {
  const c = cells.find((x) => x.id === id);
  if (!c) throw new Error(`no cell ${id}; one of ${cells.map((x) => x.id).join(', ')}`);
  return c;
};

/**
 * Starts `cell`'s wiring with `spec`: `{ url, fetchImpl, handler, http, close }`.
 * A node wiring listens on 127.0.0.1 (`fetchImpl` undefined: the network);
 * a fetch wiring is called in process (`url` is never dialled).
 */
export async function start(c, spec) {
  if (c.wiring.kind === 'node') {
    const { http, close } = c.wiring.http(spec);
    const url = await listen(http);
    return {
      url,
      http,
      fetchImpl: undefined,
      close: async () => {
        await stop(http);
        await close?.();
      },
    };
  }
  const { handler, close } = c.wiring.fetch(spec);
  return { url: 'http://127.0.0.1:9/mcp', handler, fetchImpl: inProcessFetch(handler), close: async () => close?.() };
}

/** The node:http server of `cell` (a node wiring), not listening, and what to close with it. */
export function nodeServerOf(c, spec) {
  if (c.wiring.kind !== 'node') throw new Error(`${c.label} is not served by node:http`);
  return c.wiring.http(spec);
}

/** The cells the two-process Redis suites run: node:http wirings, SDK v1 and SDK v2 with both clients. */
export const replicaCells = ['v1-node:v1', 'v2-handler-node:v1', 'v2-handler-node:v2-modern'].map(cellById);
