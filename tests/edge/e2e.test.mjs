// End to end, for real: the example Worker (examples/cloudflare-worker),
// bundled as wrangler would, inside workerd on 127.0.0.1, in front of a real
// stateless Streamable HTTP MCP server (@modelcontextprotocol/sdk) on
// 127.0.0.1 that counts every request reaching it. Tokens are minted here by
// hand with node:crypto.
//
// Also an MCP server inside workerd itself (tests/edge/harness/sdk-worker.js:
// the SDK's web-standard transport behind the same fetch wrapper), where the
// tool must see the verified context.
//
//   node --test tests/edge/e2e.test.mjs
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { serveStateless } from '../../npm/test/support.mjs';
import { EDGE_DIR, EXAMPLE_DIR, bundle, mint, readJsonc, scratchDir, startWorkerd } from './lib.mjs';

const SECRET = 'edge-e2e-secret-0123456789-abcdefghijklmnop';
const NEXT_SECRET = 'edge-e2e-next-secret-0123456789-abcdefghijk';
const INSTANCE = '0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f';

/** A token and the matching `_meta` for one call of `tool`. */
function callContext({ tool, iat = Math.floor(Date.now() / 1000), secret = SECRET, claims = {}, meta = {} }) {
  const ctx = {
    protocol: '1',
    task_id: randomUUID(),
    tool_call_id: `call_${randomUUID().slice(0, 8)}`,
    workspace_id: randomUUID(),
    end_user_id: 'user-42',
  };
  ctx.idempotency_key = `${ctx.task_id}:${ctx.tool_call_id}`;
  const token = mint({ iss: 'agentarea', aud: INSTANCE, iat, exp: iat + 300, jti: randomUUID(), tool, ...ctx, ...claims }, secret);
  const m = {};
  for (const [k, v] of Object.entries(ctx)) m[`agentarea/${k}`] = v;
  return { ctx, token, meta: { ...m, ...meta } };
}

// ---- the origin: a real MCP server that records what reached it ----------

const origin = {
  requests: [], // every HTTP request: { method, rpc, probe }
  toolRuns: [], // every tool invocation: { tool, token, args }
  gate: null, // the `progress` tool waits on it after its first notification
};

function mcpServer() {
  const server = new McpServer({ name: 'edge-origin', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    origin.toolRuns.push({ tool: 'echo', token: extra.requestInfo?.headers['x-agentarea-context'], args: { text } });
    return { content: [{ type: 'text', text: `echo: ${text}` }] };
  });
  server.registerTool('progress', { inputSchema: { steps: z.number().int() } }, async ({ steps }, extra) => {
    origin.toolRuns.push({ tool: 'progress', token: extra.requestInfo?.headers['x-agentarea-context'], args: { steps } });
    const progressToken = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: steps, message: `step ${i}` } });
      // Held until the client has seen the first notification: a proxy that
      // buffered the response would never let it through.
      if (i === 1 && origin.gate) await origin.gate;
    }
    return { content: [{ type: 'text', text: `done in ${steps} steps` }] };
  });
  return server;
}

const reachedOrigin = (probe) => origin.requests.some((r) => r.probe === probe);

const originServer = createServer(async (req, res) => {
  let rpc;
  if (req.method === 'POST') {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    rpc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  }
  origin.requests.push({ method: req.method, rpc: rpc?.method, probe: req.headers['x-e2e-probe'] });
  await serveStateless(mcpServer(), req, res, rpc);
});

// ---- the edge ------------------------------------------------------------

let scratch;
let workerd;
let edge; // the example Worker's URL
let misconfigured; // the same Worker with a secret too short to load
let modules; // the bundle, as workerd modules
let inWorkerd; // the MCP server running inside workerd

before(async () => {
  await new Promise((resolve) => originServer.listen(0, '127.0.0.1', resolve));
  const originUrl = `http://127.0.0.1:${originServer.address().port}`;
  scratch = scratchDir('e2e');
  const wrangler = readJsonc(join(EXAMPLE_DIR, 'wrangler.jsonc'));
  ({ modules } = await bundle(join(EXAMPLE_DIR, wrangler.main), join(scratch.dir, 'worker'), { minify: wrangler.minify }));
  const sdk = await bundle(join(EDGE_DIR, 'harness', 'sdk-worker.js'), join(scratch.dir, 'sdk'));
  const worker = {
    modules,
    compatibilityDate: wrangler.compatibility_date,
    compatibilityFlags: wrangler.compatibility_flags ?? [],
  };
  workerd = await startWorkerd(scratch.dir, [
    {
      ...worker,
      name: 'edge',
      bindings: { ...wrangler.vars, ORIGIN_URL: originUrl, TOOLCTX_INSTANCE_ID: INSTANCE, TOOLCTX_SECRET: SECRET, TOOLCTX_SECRET_NEXT: NEXT_SECRET },
    },
    {
      ...worker,
      name: 'misconfigured',
      bindings: { ...wrangler.vars, ORIGIN_URL: originUrl, TOOLCTX_INSTANCE_ID: INSTANCE, TOOLCTX_SECRET: 'too short' },
    },
    {
      name: 'sdk',
      modules: sdk.modules,
      compatibilityDate: wrangler.compatibility_date,
      bindings: { TOOLCTX_INSTANCE_ID: INSTANCE, TOOLCTX_SECRET: SECRET },
    },
  ]);
  inWorkerd = workerd.urls.sdk;
  edge = `${workerd.urls.edge}/mcp`;
  misconfigured = `${workerd.urls.misconfigured}/mcp`;
});

after(async () => {
  await workerd?.stop();
  scratch?.cleanup();
  originServer.closeAllConnections();
  await new Promise((resolve) => originServer.close(resolve));
});

/** The SDK's client through the edge; `tokenFor.current` goes in X-AgentArea-Context. */
async function connect(url = edge) {
  const tokenFor = { current: undefined };
  const client = new Client({ name: 'edge-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (url, init) => {
      const headers = new Headers(init?.headers);
      if (tokenFor.current) headers.set('x-agentarea-context', tokenFor.current);
      return fetch(url, { ...init, headers });
    },
  });
  await client.connect(transport);
  return { client, tokenFor };
}

/**
 * A raw tools/call POST to the edge, marked with a fresh `x-e2e-probe`
 * header so that `reachedOrigin(probe)` tells whether the origin saw it
 * (SDK clients' own background requests never carry one).
 */
function post(url, { token, name, args, meta, id = 7, extraHeaders = {}, probe = randomUUID() }) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-e2e-probe': probe, ...extraHeaders };
  if (token) headers['x-agentarea-context'] = token;
  return fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } }),
  });
}

describe('the example Worker in workerd in front of a real MCP server', () => {
  test("the bundle: the package's worker entry, importing only its .wasm module, no Node built-ins", () => {
    assert.deepEqual(modules.map((m) => [m.name, m.wasm ? 'wasm' : 'esModule']), [['worker.js', 'esModule'], ['toolctx_wasm_bg.wasm', 'wasm']]);
    const js = readFileSync(modules[0].esModule, 'utf8');
    const imports = [...js.matchAll(/\bimport\s*(?:[\w$*{},\s]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1]);
    assert.deepEqual(imports, ['./toolctx_wasm_bg.wasm']);
    assert.match(js, /initSync|new WebAssembly\.Instance/);
    assert.doesNotMatch(js, /["']node:/);
  });

  test('initialize and tools/list pass through to the origin untouched', async () => {
    const before = origin.requests.length;
    const { client } = await connect();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['echo', 'progress']);
    const seen = origin.requests.slice(before).map((r) => r.rpc);
    assert.ok(seen.includes('initialize') && seen.includes('tools/list'), JSON.stringify(seen));
    await client.close();
  });

  test('an accepted call reaches the tool, with the token forwarded', async () => {
    const { client, tokenFor } = await connect();
    const { token, meta } = callContext({ tool: 'echo' });
    tokenFor.current = token;
    const runs = origin.toolRuns.length;
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi from the edge' }, _meta: meta });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo: hi from the edge' }]);
    assert.deepEqual(origin.toolRuns.slice(runs), [{ tool: 'echo', token, args: { text: 'hi from the edge' } }]);
    await client.close();
  });

  test('a token signed with the next secret (rotation) is accepted', async () => {
    const { token, meta } = callContext({ tool: 'echo', secret: NEXT_SECRET });
    const runs = origin.toolRuns.length;
    const probe = randomUUID();
    const res = await post(edge, { token, name: 'echo', args: { text: 'rotated' }, meta, probe });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /echo: rotated/);
    assert.ok(reachedOrigin(probe));
    assert.equal(origin.toolRuns.length, runs + 1);
  });

  const now = Math.floor(Date.now() / 1000);
  const refusals = [
    ['no token', () => ({ meta: callContext({ tool: 'echo' }).meta }), 401, -32001, 'token_missing'],
    ['a bad signature', () => callContext({ tool: 'echo', secret: 'someone-else-0123456789-abcdefghijklmnopq' }), 401, -32001, 'signature_invalid'],
    ['an expired token', () => callContext({ tool: 'echo', iat: now - 400 }), 401, -32001, 'token_expired'],
    ['another instance', () => callContext({ tool: 'echo', claims: { aud: 'another-instance' } }), 401, -32001, 'audience_invalid'],
    ['a token for another tool', () => callContext({ tool: 'progress' }), 403, -32003, 'tool_mismatch'],
    ['_meta that differs from the token', () => callContext({ tool: 'echo', meta: { 'agentarea/task_id': 'forged' } }), 403, -32003, 'meta_mismatch'],
    ['_meta missing a context key', () => {
      const c = callContext({ tool: 'echo' });
      delete c.meta['agentarea/workspace_id'];
      return c;
    }, 403, -32003, 'meta_missing'],
    ['an Mcp-Name header naming another tool', () => ({ ...callContext({ tool: 'echo' }), extraHeaders: { 'mcp-name': 'progress' } }), 400, -32020, 'header_mismatch'],
    ['the token sent twice (one joined header line)', () => {
      const c = callContext({ tool: 'echo' });
      return { meta: c.meta, extraHeaders: { 'x-agentarea-context': `${c.token}, ${c.token}` } };
    }, 401, -32001, 'token_duplicated'],
  ];
  for (const [what, make, status, code, reason] of refusals) {
    test(`refused before the origin: ${what} (${reason})`, async () => {
      const { token, meta, extraHeaders } = make();
      const probe = randomUUID();
      const res = await post(edge, { token, name: 'echo', args: { text: 'must not run' }, meta, id: 41, extraHeaders, probe });
      assert.equal(res.status, status);
      assert.equal(res.headers.get('content-type'), 'application/json');
      const body = await res.json();
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, 41);
      assert.equal(body.error.code, code);
      assert.equal(body.error.data.reason, reason);
      assert.ok(!reachedOrigin(probe), 'the origin saw the refused request');
    });
  }

  test('a refused call through the SDK client: its error, and no request at the origin', async () => {
    const { client, tokenFor } = await connect();
    const { meta } = callContext({ tool: 'echo' });
    tokenFor.current = callContext({ tool: 'echo' }).token; // a valid token, for another call
    // The client opens its GET stream on its own schedule: count the calls.
    const calls = () => origin.requests.filter((r) => r.rpc === 'tools/call').length;
    const before = calls();
    const err = await client.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: meta }).then(
      () => assert.fail('the call was not refused'),
      (e) => e,
    );
    assert.equal(err.code, 403);
    assert.match(String(err.message), /meta_mismatch/);
    assert.equal(calls(), before);
    await client.close();
  });

  test('a body over the limit is refused (413) without reaching the origin', async () => {
    const { token, meta } = callContext({ tool: 'echo' });
    const probe = randomUUID();
    const res = await post(edge, { token, name: 'echo', args: { text: 'x'.repeat(1024 * 1024) }, meta, probe });
    assert.equal(res.status, 413);
    assert.equal((await res.json()).error.data.reason, 'body_too_large');
    assert.ok(!reachedOrigin(probe));
  });

  test('progress notifications stream through as SSE while the tool still runs', async () => {
    const { token, meta } = callContext({ tool: 'progress' });
    let release;
    origin.gate = new Promise((r) => (release = r));
    let timedOut = false;
    // Fail, never hang, when nothing streams: the watchdog opens the gate.
    const watchdog = setTimeout(() => {
      timedOut = true;
      release();
    }, 15000);
    try {
      const res = await post(edge, { token, name: 'progress', args: { steps: 3 }, meta: { ...meta, progressToken: 'p-1' } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      const messages = [];
      let releasedEarly = false;
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          if (data === '') continue;
          const msg = JSON.parse(data);
          messages.push(msg);
          if (msg.method === 'notifications/progress' && msg.params.progress === 1) {
            // The first notification arrived while the tool is held at the gate.
            releasedEarly = !timedOut;
            release();
          }
        }
      }
      assert.ok(releasedEarly, 'the first progress notification did not arrive before the tool finished');
      const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
      assert.deepEqual(progress.map((p) => [p.progressToken, p.progress, p.total]), [['p-1', 1, 3], ['p-1', 2, 3], ['p-1', 3, 3]]);
      const result = messages.at(-1);
      assert.equal(result.id, 7);
      assert.deepEqual(result.result.content, [{ type: 'text', text: 'done in 3 steps' }]);
    } finally {
      clearTimeout(watchdog);
      origin.gate = null;
    }
  });

  test('the SDK client gets progress through the edge (onprogress)', async () => {
    const { client, tokenFor } = await connect();
    const { token, meta } = callContext({ tool: 'progress' });
    tokenFor.current = token;
    const seen = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 2 }, _meta: meta }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.deepEqual(seen, [1, 2]);
    assert.deepEqual(result.content, [{ type: 'text', text: 'done in 2 steps' }]);
    await client.close();
  });

  test('GET and DELETE pass through to the origin (its own answer comes back)', async () => {
    const direct = `http://127.0.0.1:${originServer.address().port}/mcp`;
    for (const method of ['GET', 'DELETE']) {
      const probe = randomUUID();
      const answer = async (url) => {
        const res = await fetch(url, { method, headers: { accept: 'text/event-stream', 'x-e2e-probe': probe } });
        await res.body?.cancel();
        return [res.status, res.headers.get('content-type')];
      };
      const viaEdge = await answer(edge);
      assert.deepEqual(origin.requests.filter((r) => r.probe === probe).map((r) => r.method), [method]);
      assert.deepEqual(viaEdge, await answer(direct), `${method}: the origin's own answer`);
    }
  });

  test('a misconfigured Worker answers 500 without the secret and never proxies', async () => {
    const { token, meta } = callContext({ tool: 'echo' });
    const probe = randomUUID();
    const res = await post(misconfigured, { token, name: 'echo', args: { text: 'x' }, meta, probe });
    assert.equal(res.status, 500);
    const text = await res.text();
    assert.doesNotMatch(text, /too short/);
    assert.equal(JSON.parse(text).error.code, -32603);
    assert.ok(!reachedOrigin(probe));
    // workerd's stderr may arrive after the response.
    for (let i = 0; i < 100 && !/toolctx configuration:/.test(workerd.logs()); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(workerd.logs(), /toolctx configuration: secret_length/);
    assert.doesNotMatch(workerd.logs(), /too short/);
  });
});

describe("an MCP server inside workerd (the SDK's web-standard transport) behind withToolctx", () => {
  const runs = async () => (await (await fetch(`${inWorkerd}/runs`)).json()).runs;

  test('the tool sees the verified context (contextFrom)', async () => {
    const { client, tokenFor } = await connect(`${inWorkerd}/mcp`);
    const { token, ctx, meta } = callContext({ tool: 'whoami' });
    tokenFor.current = token;
    const result = await client.callTool({ name: 'whoami', arguments: { note: 'inside' }, _meta: meta });
    assert.deepEqual(JSON.parse(result.content[0].text), { note: 'inside', task_id: ctx.task_id, secret_index: 0 });
    await client.close();
  });

  test('a refused call never runs the tool', async () => {
    const before = await runs();
    const { token, meta } = callContext({ tool: 'whoami', iat: Math.floor(Date.now() / 1000) - 400 });
    const res = await post(`${inWorkerd}/mcp`, { token, name: 'whoami', args: { note: 'x' }, meta, id: 'req-9' });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), {
      jsonrpc: '2.0',
      id: 'req-9',
      error: { code: -32001, message: 'context token expired', data: { reason: 'token_expired' } },
    });
    assert.equal(await runs(), before);
  });

  test("onVerdict hears each request once in workerd, the refusal's reason and id included", async () => {
    const heard = async () => (await fetch(`${inWorkerd}/verdicts`)).json();
    const before = (await heard()).length;
    const { token, meta } = callContext({ tool: 'whoami', iat: Math.floor(Date.now() / 1000) - 400 });
    await (await post(`${inWorkerd}/mcp`, { token, name: 'whoami', args: { note: 'x' }, meta, id: 'req-10' })).arrayBuffer();
    await (await fetch(`${inWorkerd}/mcp`)).arrayBuffer();
    assert.deepEqual((await heard()).slice(before), [
      { outcome: 'reject', reason: 'token_expired', requestId: 'req-10', entry: 'fetch' },
      { outcome: 'pass', entry: 'fetch' },
    ]);
  });
});
