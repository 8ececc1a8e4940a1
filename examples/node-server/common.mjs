// What server.mjs (MCP SDK v2) and server-v1.mjs (MCP SDK 1.x) share: the
// command line, the verifier built from the environment, the four tools and
// the HTTP server. The two files differ only in how they build an MCP server
// and serve a request with their SDK, and in where a tool handler's second
// argument keeps the cancellation signal and the HTTP headers (`view` below).
//
// Options:
//   --port N             listen on 127.0.0.1:N (default $PORT, else a free port)
//   --no-verify          no toolctx at all: the unprotected copy that the demo
//                        puts behind Envoy and its filter
//   --context-optional   the verifier with `requireContext: false`: a
//                        tools/call with no token and no agentarea/* keys in
//                        _meta passes without context (the MCP conformance
//                        suite's runs, tests/conformance)
//   --tuix               the verifier with `forward: { tuix: true }`: X-Session-Id
//                        and X-Idempotency-Key removed from every request and
//                        set from an accepted call's _meta (CONTRACT §7)
//   --json-response      answer with application/json instead of an SSE stream
//                        (the SDK then drops progress notifications)
//   --exit-with-stdin    exit when standard input closes (test drivers)
//   --record FILE        append one JSON line to FILE for every request handed
//                        on to the MCP handler, {"handed_on": method, "headers":
//                        [[name, value], ...], "context": verified context or
//                        null}, and one for every tool run, {"run": tool,
//                        "headers": [...]}, each written before the request goes
//                        on or the tool runs (test drivers: what passed the
//                        middleware and what ran, tests/hostile)
//   --redis URL          the replay guard and create_invoice's results in
//                        Redis (`redis://127.0.0.1:PORT`, node-redis), shared
//                        with other replicas and with the Python and Rust
//                        examples
//
// Environment: TOOLCTX_INSTANCE_ID and TOOLCTX_SECRET (required unless
// --no-verify), TOOLCTX_SECRET_PREVIOUS (optional, accepted too: rotation),
// TOOLCTX_CREDENTIAL (optional static credential in `authorization`).
//
// Tools: get_order, export_report (sends progress), create_invoice (an
// idempotent tool: a retry gets the first result back), whoami (what this
// server saw: the verified context and the x-toolctx-* headers a proxy added)
// and toolctx_probe (how many times it ran, for `toolctx conformance`).
// Prints `listening http://127.0.0.1:PORT/mcp` once it accepts connections.
import { openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { z } from 'zod';
import { contextFrom, createVerifier, redisReplayStore, toolctx } from 'toolctx';
import { idempotent, memoryIdempotencyStore, progress, redisIdempotencyStore } from 'toolctx/helpers';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

export const options = {
  port: Number(option('--port') ?? process.env.PORT ?? 0),
  verify: !flag('--no-verify'),
  contextOptional: flag('--context-optional'),
  jsonResponse: flag('--json-response'),
  tuix: flag('--tuix'),
  exitWithStdin: flag('--exit-with-stdin'),
  record: option('--record'),
  redis: option('--redis'),
};

// --redis: one node-redis client for the replay guard and the idempotency
// store. Without it both stay in this process.
const redis = options.redis ? await connectRedis(options.redis) : undefined;
async function connectRedis(url) {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  client.on('error', (e) => console.warn(`redis: ${e.message}`));
  await client.connect();
  return client;
}
// Process-wide, across the per-request servers: create_invoice's results.
const invoices = redis ? redisIdempotencyStore(redis) : memoryIdempotencyStore();

// --record: synchronous appends, so the line is there before anything answers.
const recordFd = options.record ? openSync(options.record, 'a') : undefined;
function record(entry) {
  if (recordFd !== undefined) writeSync(recordFd, `${JSON.stringify(entry)}\n`);
}

// Process-wide, across the per-request servers: the probe's run count.
let probeRuns = 0;

/**
 * Registers the example's tools on `server` (an McpServer of either SDK
 * line). `view` reads what the two lines keep in different places of a tool
 * handler's second argument: `view.signal(extra)`, the call's AbortSignal,
 * and `view.headers(extra)`, the request's headers as [name, value] pairs
 * with lower-case names. `contextFrom` and `progress` take either.
 */
export function registerTools(mcpServer, view) {
  const server = {
    registerTool: (name, config, handler) =>
      mcpServer.registerTool(name, config, (args, extra) => {
        record({ run: name, headers: [...view.headers(extra)] });
        return handler(args, extra);
      }),
  };
  server.registerTool(
    'get_order',
    {
      description: 'Looks up an order; says which task asked for it',
      inputSchema: z.object({ orderId: z.string() }),
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
      inputSchema: z.object({ pages: z.number().int().min(1).max(20).default(3) }),
    },
    async ({ pages }, extra) => {
      // Sends at the platform's relay rate (one per 0.5 s) and always the last.
      const report = progress(extra);
      for (let page = 1; page <= pages; page += 1) {
        await new Promise((resolve) => setTimeout(resolve, 550));
        if (view.signal(extra)?.aborted) throw new Error('cancelled');
        await report(page, pages, `page ${page} of ${pages}`);
      }
      return { content: [{ type: 'text', text: `exported ${pages} pages` }] };
    },
  );

  server.registerTool(
    'whoami',
    {
      description: 'What this server saw: the verified context and the x-toolctx-* headers a proxy added',
      inputSchema: z.object({}),
    },
    async (_args, extra) => {
      const forwarded = Object.fromEntries([...view.headers(extra)].filter(([k]) => k.startsWith('x-toolctx-')));
      const saw = { verified_here: options.verify, context: contextFrom(extra) ?? null, proxy_headers: forwarded };
      return { content: [{ type: 'text', text: JSON.stringify(saw) }], structuredContent: saw };
    },
  );

  // Registered past the recording wrapper: its run line is written inside the
  // guard, so a replayed retry (which runs nothing) writes none.
  mcpServer.registerTool(
    'create_invoice',
    {
      description: 'Not safe to run twice: a retry gets the first result back',
      inputSchema: z.object({ amount: z.number().int() }),
    },
    idempotent(
      async ({ amount }, extra) => {
        record({ run: 'create_invoice', headers: [...view.headers(extra)] });
        const out = { invoice: `inv-${contextFrom(extra)?.idempotency_key ?? ''}`, amount };
        return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
      },
      { store: invoices },
    ),
  );

  // The conformance probe: how many times it ran in this process, this run
  // included. `toolctx conformance` reads it around every refused call to
  // prove the call never ran.
  server.registerTool(
    'toolctx_probe',
    {
      description: 'Counts its own runs (toolctx conformance probe)',
      inputSchema: z.object({}),
      outputSchema: z.object({ runs: z.number().int() }),
    },
    async () => {
      probeRuns += 1;
      const out = { runs: probeRuns };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
}

function internalError(res, message) {
  if (res.headersSent) return;
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message } }));
}

/**
 * Serves MCP on 127.0.0.1: `serveMcp(req, res, body)` gets every request,
 * behind the toolctx middleware (`body` is the JSON body it read and
 * verified) or, with --no-verify, as it arrived (`body` undefined: the SDK
 * reads it). Prints the listening line; exits on SIGTERM, SIGINT and, with
 * --exit-with-stdin, when standard input closes.
 */
export function listen(serveMcp) {
  const serve = async (req, res, body) => {
    if (recordFd !== undefined) {
      const headers = [];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      record({ handed_on: req.method, headers, context: req.toolctx ?? null });
    }
    try {
      await serveMcp(req, res, body);
    } catch (e) {
      internalError(res, String(e));
    }
  };
  let handle = (req, res) => serve(req, res, undefined);
  if (options.verify) {
    const secrets = [process.env.TOOLCTX_SECRET, process.env.TOOLCTX_SECRET_PREVIOUS].filter(Boolean);
    const credential = process.env.TOOLCTX_CREDENTIAL
      ? { header: 'authorization', values: [process.env.TOOLCTX_CREDENTIAL] }
      : undefined;
    // Throws a ToolctxError naming the problem (never the secret) on a bad configuration.
    const verifier = createVerifier({
      instanceId: process.env.TOOLCTX_INSTANCE_ID,
      secrets,
      credential,
      ...(options.contextOptional && { requireContext: false }),
      // What goes upstream is the core's decision (CONTRACT §7).
      ...(options.tuix && { forward: { tuix: true } }),
      ...(redis && { replayGuard: redisReplayStore(redis) }),
    });
    // One line per refusal on stderr, for the operator (never a token or secret).
    const onVerdict = (e) => {
      if (e.outcome === 'reject') console.warn(JSON.stringify({ msg: 'toolctx refused', reason: e.reason, status: e.status, id: e.requestId, tool: e.tool, peer: e.peer }));
    };
    const middleware = toolctx(verifier, { onVerdict });
    handle = (req, res) => middleware(req, res, (err) => (err ? internalError(res, 'internal error') : serve(req, res, req.body)));
  }

  const httpServer = createServer(handle);
  httpServer.listen(options.port, '127.0.0.1', () => {
    const mode = !options.verify ? ' (verification off)' : options.contextOptional ? ' (context optional)' : '';
    console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp${mode}`);
  });
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
  if (options.exitWithStdin) {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();
  }
}
