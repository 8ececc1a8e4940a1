// MCP SDK v2 inside workerd: tests/edge/harness/sdk-v2-worker.js
// (@modelcontextprotocol/server's createMcpHandler behind withToolctx, with
// toolctx/helpers' progress and idempotent in its tools), bundled as wrangler
// would and run by workerd on 127.0.0.1, driven from Node by the clients of
// npm/test/sdks.mjs: the 2025 client (SDK v1's, the protocol a v2 Client
// speaks without versionNegotiation) and @modelcontextprotocol/client
// pinned to 2026-07-28. Tokens are minted by hand (npm/test/support.mjs).
//
//   node --test tests/edge/sdk-v2.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clients } from '../../npm/test/sdks.mjs';
import { INSTANCE, SECRET, callContext } from '../../npm/test/support.mjs';
import { EDGE_DIR, EXAMPLE_DIR, bundle, readJsonc, scratchDir, startWorkerd } from './lib.mjs';

// The worker's non-ASCII tool (sdk-v2-worker.js).
const NON_ASCII_TOOL = 'prüfen_überweisung';
/** A header value in the `=?base64?...?=` form (UTF-8, padded base64). */
const encoded = (name) => `=?base64?${Buffer.from(name, 'utf8').toString('base64')}?=`;

let scratch;
let workerd;
let built; // the bundle: { modules, size }
let strict; // the worker's URL (requireContext: true)
let optional; // the same worker with requireContext: false

before(async () => {
  scratch = scratchDir('sdk-v2');
  built = await bundle(join(EDGE_DIR, 'harness', 'sdk-v2-worker.js'), join(scratch.dir, 'sdk-v2'));
  const { compatibility_date: compatibilityDate } = readJsonc(join(EXAMPLE_DIR, 'wrangler.jsonc'));
  const worker = (name, requireContext) => ({
    name,
    modules: built.modules,
    compatibilityDate,
    bindings: { TOOLCTX_INSTANCE_ID: INSTANCE, TOOLCTX_SECRET: SECRET, TOOLCTX_REQUIRE_CONTEXT: String(requireContext) },
  });
  workerd = await startWorkerd(scratch.dir, [worker('strict', true), worker('optional', false)]);
  strict = workerd.urls.strict;
  optional = workerd.urls.optional;
});

after(async () => {
  await workerd?.stop();
  scratch?.cleanup();
});

/** How many times the tools of the worker at `base` ran. */
const runs = async (base) => (await (await fetch(`${base}/runs`)).json()).runs;

/** A fetch that sets `Mcp-Name: value` on every tools/call POST, as a client (or a proxy) might. */
const withMcpName = (value) => (url, init) => {
  const isCall = typeof init?.body === 'string' && JSON.parse(init.body).method === 'tools/call';
  if (!isCall) return fetch(url, init);
  const headers = new Headers(init.headers);
  headers.set('mcp-name', value);
  return fetch(url, { ...init, headers });
};

test("the bundle: toolctx's web entries and the SDK's workerd shims, its two .wasm modules, no Node built-ins", () => {
  // The .wasm modules in the order esbuild resolved them, which varies.
  assert.deepEqual(built.modules.map((m) => [m.name, m.wasm ? 'wasm' : 'esModule']).sort(), [
    ['toolctx_wasm_bg.wasm', 'wasm'],
    ['toolctx_wasm_conventions_bg.wasm', 'wasm'],
    ['worker.js', 'esModule'],
  ]);
  const js = readFileSync(built.modules[0].esModule, 'utf8');
  const imports = [...js.matchAll(/\bimport\s*(?:[\w$*{},\s]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1]);
  assert.deepEqual(imports.sort(), ['./toolctx_wasm_bg.wasm', './toolctx_wasm_conventions_bg.wasm']);
  assert.doesNotMatch(js, /["']node:/);
  // esbuild names each bundled file that has code in a comment (the bundle is
  // not minified); web/helpers.js only re-exports, so its web flavour shows
  // as web/conventions-glue.js, the conventions module it loads.
  const files = [...js.matchAll(/^\/\/ (\S+\.m?js)$/gm)].map((m) => m[1]);
  for (const entry of ['npm/dist/web/index.js', 'npm/dist/web/glue.js', 'npm/dist/web/conventions-glue.js', '@modelcontextprotocol/server/dist/shimsWorkerd.mjs']) {
    assert.ok(files.some((f) => f.endsWith(entry)), `${entry} is not in the bundle`);
  }
  for (const nodeOnly of ['npm/dist/node/', 'shimsNode', 'shimsBrowser']) {
    assert.ok(!files.some((f) => f.includes(nodeOnly)), `${nodeOnly} is in the bundle`);
  }
  console.log(`sdk-v2 worker bundle: ${built.size.raw} bytes, ${built.size.gzip} gzip (worker.js and both .wasm)`);
});

for (const client of [clients.v1, clients['v2-modern']]) {
  describe(`SDK v2 (createMcpHandler) inside workerd behind withToolctx · ${client.name}`, () => {
    const url = () => `${strict}/mcp`;

    /** One call with its own token and client: `{ result, ctx }`. */
    async function call(name, args, { ctx, fetchImpl, onprogress } = {}) {
      const c = callContext({ tool: name, ctx });
      const mcp = await client.connect(url(), { 'x-agentarea-context': c.token }, fetchImpl);
      try {
        return { result: await mcp.callTool({ name, arguments: args, _meta: c.meta }, onprogress ? { onprogress } : {}), ctx: c.ctx };
      } finally {
        await mcp.close();
      }
    }

    /** A call expected to be refused: its `{ status, json }`, and the tools did not run. */
    async function refused(name, args, { token, meta, fetchImpl }) {
      const before = await runs(strict);
      const mcp = await client.connect(url(), token ? { 'x-agentarea-context': token } : {}, fetchImpl);
      let refusal;
      try {
        refusal = await mcp.refused({ name, arguments: args, _meta: meta });
      } finally {
        await mcp.close();
      }
      assert.equal(await runs(strict), before, 'a tool ran for a refused call');
      return refusal;
    }

    const assertRefusal = ({ status, json }, want) => {
      assert.deepEqual([status, json.error.code, json.error.data.reason], want, JSON.stringify(json));
      assert.equal(json.jsonrpc, '2.0');
      assert.equal(typeof json.id, 'number');
    };

    test('a verified call reaches the tool with its context (contextFrom(ctx) inside workerd)', async () => {
      const before = await runs(strict);
      const { result, ctx } = await call('whoami', { note: 'inside' });
      assert.deepEqual(result.structuredContent, {
        note: 'inside',
        task_id: ctx.task_id,
        tool_call_id: ctx.tool_call_id,
        secret_index: 0,
        // A 2026-07-28 client names the tool in Mcp-Name; a 2025 one sends none.
        mcp_name: client.modern ? 'whoami' : null,
      });
      assert.equal(await runs(strict), before + 1);
    });

    const now = Math.floor(Date.now() / 1000);
    const refusals = [
      ['no token', () => ({ meta: callContext({ tool: 'whoami' }).meta }), [401, -32001, 'token_missing']],
      ['an expired token', () => callContext({ tool: 'whoami', iat: now - 3600 }), [401, -32001, 'token_expired']],
      ['a token for another tool', () => callContext({ tool: 'charge' }), [403, -32003, 'tool_mismatch']],
      ['_meta that differs from the token', () => callContext({ tool: 'whoami', overrideMeta: { 'agentarea/task_id': 'forged' } }), [403, -32003, 'meta_mismatch']],
    ];
    for (const [what, make, want] of refusals) {
      test(`refused, the tool not run: ${what} (${want[2]})`, async () => {
        assertRefusal(await refused('whoami', { note: 'must not run' }, make()), want);
      });
    }

    test(`Mcp-Name in its =?base64?...?= form for a non-ASCII tool name is accepted${client.modern ? ' (sent by the client itself)' : ''}`, async () => {
      // The 2026-07-28 client encodes the name on its own; the 2025 one sends no Mcp-Name, so it is added.
      const { result, ctx } = await call(NON_ASCII_TOOL, { note: 'ü' }, client.modern ? {} : { fetchImpl: withMcpName(encoded(NON_ASCII_TOOL)) });
      assert.equal(result.structuredContent.task_id, ctx.task_id);
      assert.equal(result.structuredContent.mcp_name, encoded(NON_ASCII_TOOL));
    });

    test('an Mcp-Name (=?base64?...?=) naming another tool is refused header_mismatch', async () => {
      const c = callContext({ tool: NON_ASCII_TOOL });
      const r = await refused(NON_ASCII_TOOL, { note: 'must not run' }, { ...c, fetchImpl: withMcpName(encoded('prüfen_überweisunq')) });
      assertRefusal(r, [400, -32020, 'header_mismatch']);
    });

    test('progress(ctx) notifications reach the client, the final one at once', async () => {
      const received = [];
      const { result } = await call('report', { steps: 3 }, { onprogress: (p) => received.push(p) });
      // Three reports within 500 ms: the first is sent, the second held back
      // by the rate limit and dropped for the final one.
      assert.deepEqual(received[0], { progress: 1, total: 3, message: 'step 1' });
      assert.deepEqual(received.at(-1), { progress: 3, total: 3, message: 'step 3' });
      assert.ok(received.length <= 3, `${received.length} notifications`);
      assert.equal(result.content[0].text, `sent ${received.length} of 3`);
    });

    test('idempotent: a retry (same context, new token) is replayed, marked agentarea/replayed, and the tool runs once', async () => {
      const before = await runs(strict);
      const first = await call('charge', { orderId: 'E-1', amount: 12 });
      assert.equal(first.result._meta?.['agentarea/replayed'], undefined, 'a first call is not a replay');
      assert.deepEqual(first.result.structuredContent, { orderId: 'E-1', amount: 12, run: before + 1 });
      const retry = await call('charge', { amount: 12, orderId: 'E-1' }, { ctx: first.ctx });
      assert.equal(retry.result._meta?.['agentarea/replayed'], true);
      assert.deepEqual(retry.result.structuredContent, first.result.structuredContent);
      assert.deepEqual(retry.result.content, first.result.content);
      assert.equal(await runs(strict), before + 1, 'the tool ran again for a retry');
    });

    test('idempotent: concurrent duplicates in one isolate run the tool once; the others wait and get its result', async () => {
      const before = await runs(strict);
      const { ctx } = callContext({ tool: 'charge' });
      const args = { orderId: 'E-2', amount: 5, delayMs: 200 };
      const results = await Promise.all([1, 2, 3].map(() => call('charge', args, { ctx })));
      assert.equal(await runs(strict), before + 1, 'ran more than once');
      assert.equal(results.filter((r) => r.result._meta?.['agentarea/replayed'] === true).length, 2);
      for (const r of results) assert.deepEqual(r.result.structuredContent, { orderId: 'E-2', amount: 5, run: before + 1 });
    });

    test('idempotent refuses a call without context (requireContext: false lets it through): unverified, isError, the tool not run', async () => {
      const before = await runs(optional);
      const mcp = await client.connect(`${optional}/mcp`, {});
      let result;
      try {
        result = await mcp.callTool({ name: 'charge', arguments: { orderId: 'U-1', amount: 3 } });
      } finally {
        await mcp.close();
      }
      assert.equal(result.isError, true);
      assert.equal(result._meta?.['toolctx/idempotency'], 'unverified');
      assert.equal(result._meta?.['agentarea/replayed'], undefined);
      assert.equal(result.structuredContent, undefined);
      assert.match(result.content[0].text, /no verified toolctx context/);
      assert.equal(await runs(optional), before, 'the tool ran without context');
    });
  });
}
