// Packaging check: `npm pack` the built package, install the tarball into a
// temporary project and import it as a user would (ESM; no CJS is offered),
// through each `exports` condition. Run with `node --test npm/test/pack.mjs`.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const npmDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const RAW_BUDGET = 120 * 1024;
const GZIP_BUDGET = 50 * 1024;

let work;
let project;
let files;

const node = (args, cwd = project) => execFileSync(process.execPath, args, { cwd, encoding: 'utf8' });

before(() => {
  work = mkdtempSync(join(tmpdir(), 'toolctx-pack-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: npmDir, encoding: 'utf8' });
  const [info] = JSON.parse(out);
  files = info.files.map((f) => f.path);
  project = join(work, 'app');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', join(work, info.filename)], {
    cwd: project,
    stdio: 'pipe',
  });
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the built entries, both glues and the wasm, and nothing else', () => {
  for (const f of [
    'package.json',
    'README.md',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/worker.js',
    'dist/wasm/node/toolctx_wasm.js',
    'dist/wasm/node/toolctx_wasm_bg.wasm',
    'dist/wasm/web/toolctx_wasm.js',
    'dist/wasm/web/toolctx_wasm_bg.wasm',
  ]) {
    assert.ok(files.includes(f), `${f} missing from the tarball`);
  }
  const stray = files.filter((f) => !(f.startsWith('dist/') || f === 'package.json' || f === 'README.md'));
  assert.deepEqual(stray, []);
  const pkg = JSON.parse(readFileSync(join(project, 'node_modules/toolctx/package.json'), 'utf8'));
  assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependency');
});

test(`the wasm is within budget (${RAW_BUDGET} bytes raw, ${GZIP_BUDGET} gzip)`, () => {
  const wasm = join(project, 'node_modules/toolctx/dist/wasm/node/toolctx_wasm_bg.wasm');
  const raw = statSync(wasm).size;
  const gz = gzipSync(readFileSync(wasm), { level: 9 }).length;
  console.log(`wasm: ${raw} bytes raw, ${gz} bytes gzip`);
  assert.ok(raw <= RAW_BUDGET, `${raw} bytes raw`);
  assert.ok(gz <= GZIP_BUDGET, `${gz} bytes gzip`);
});

test('the exports conditions pick the right entry', () => {
  const resolve = (conditions) =>
    node([...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', 'console.log(import.meta.resolve("toolctx"))']).trim();
  assert.match(resolve([]), /\/dist\/index\.js$/);
  for (const c of ['workerd', 'worker', 'browser']) assert.match(resolve([c]), /\/dist\/worker\.js$/, c);
  const explicit = node(['--input-type=module', '-e', 'console.log(import.meta.resolve("toolctx/worker"))']).trim();
  assert.match(explicit, /\/dist\/worker\.js$/);
});

const SMOKE = `
import { createVerifier, ToolctxError, contextFrom } from 'toolctx';
const v = createVerifier({ instanceId: 'i', secrets: ['0123456789abcdef0123456789abcdef'] });
const r = v.verify({ method: 'POST', headers: [], body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}' }, { now: 1 });
let code;
try { createVerifier({ instanceId: 'i', secrets: ['short'] }); } catch (e) { code = e instanceof ToolctxError && e.code; }
console.log(JSON.stringify({ reason: r.reason, status: r.status, code, none: contextFrom({}) ?? null, shown: String(v).includes('0123456789abcdef') }));
`;

test('Node imports the package synchronously and it verifies', () => {
  const out = JSON.parse(node(['--input-type=module', '-e', SMOKE]));
  assert.deepEqual(out, { reason: 'token_missing', status: 401, code: 'secret_length', none: null, shown: false });
});

test('the worker entry instantiates with initSync from an imported WebAssembly.Module', () => {
  // Emulates workerd and bundlers: a `.wasm` import yields a WebAssembly.Module.
  writeFileSync(
    join(project, 'wasm-as-module.mjs'),
    `export async function load(url, context, next) {
      if (url.endsWith('.wasm')) {
        return { format: 'module', shortCircuit: true, source:
          'import { readFileSync } from "node:fs";' +
          'export default new WebAssembly.Module(readFileSync(new URL(' + JSON.stringify(url) + ')));' };
      }
      return next(url, context);
    }`,
  );
  writeFileSync(
    join(project, 'register.mjs'),
    `import { register } from 'node:module'; register('./wasm-as-module.mjs', import.meta.url);`,
  );
  const out = JSON.parse(node(['--conditions=workerd', '--import', './register.mjs', '--input-type=module', '-e', SMOKE]));
  assert.deepEqual(out, { reason: 'token_missing', status: 401, code: 'secret_length', none: null, shown: false });
});

test('toolctx/helpers resolves from the tarball, in Node and under the worker conditions, and needs no wasm (it loads under the worker conditions without a .wasm loader)', () => {
  const probe = `
import * as h from 'toolctx/helpers';
const hash = await h.canonicalHash({ b: 1, a: 2 });
console.log(JSON.stringify({ names: ['idempotent', 'memoryStore', 'redisStore', 'progress', 'checkResult', 'cancellable', 'noticeCancelled'].filter((n) => typeof h[n] !== 'function'), hash }));
`;
  const want = createHash('sha256').update('{"a":2,"b":1}').digest('hex');
  for (const conditions of [[], ['--conditions=workerd']]) {
    const out = JSON.parse(node([...conditions, '--input-type=module', '-e', probe]));
    assert.deepEqual(out.names, []);
    assert.equal(out.hash, want);
  }
  assert.ok(files.includes('dist/helpers.js') && files.includes('dist/helpers.d.ts'));
});

/** A free port on 127.0.0.1 (closed again before it is handed over). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

test('the README example runs as written and verifies a call from the real SDK client', async () => {
  const readme = readFileSync(join(npmDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## An MCP server in 15 lines'));
  const code = section.slice(section.indexOf('```js\n') + 6, section.indexOf('\n```', section.indexOf('```js\n')));
  assert.ok(code.split('\n').length <= 17, 'the example grew');
  writeFileSync(join(project, 'server.mjs'), code);
  // The example's other dependencies, from this package's dev dependencies.
  mkdirSync(join(project, 'node_modules/@modelcontextprotocol'), { recursive: true });
  symlinkSync(join(npmDir, 'node_modules/@modelcontextprotocol/sdk'), join(project, 'node_modules/@modelcontextprotocol/sdk'));
  symlinkSync(join(npmDir, 'node_modules/zod'), join(project, 'node_modules/zod'));

  const secret = 'readme-example-secret-0123456789abcdef';
  const instance = 'readme-instance';
  const port = await freePort();
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd: project,
    env: { ...process.env, TOOLCTX_INSTANCE_ID: instance, TOOLCTX_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const now = Math.floor(Date.now() / 1000);
    const ctx = { protocol: '1', task_id: 'task-1', tool_call_id: 'call-1', workspace_id: 'ws-1', idempotency_key: 'task-1:call-1' };
    const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const signed = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss: 'agentarea', aud: instance, iat: now, exp: now + 300, ...ctx })}`;
    const token = `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
    const meta = Object.fromEntries(Object.entries(ctx).map(([k, v]) => [`agentarea/${k}`, v]));
    let client;
    for (let attempt = 0; ; attempt++) {
      client = new Client({ name: 'readme-test', version: '1.0.0' });
      try {
        await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-agentarea-context': token } } }));
        break;
      } catch (e) {
        if (attempt >= 50 || child.exitCode !== null) throw e;
        await new Promise((r) => setTimeout(r, 100)); // the server is still starting
      }
    }
    try {
      const result = await client.callTool({ name: 'get_order', arguments: { orderId: 'A-17' }, _meta: meta });
      assert.equal(result.content[0].text, 'order A-17 for task task-1');
      const refused = await client.callTool({ name: 'get_order', arguments: { orderId: 'A-17' }, _meta: { ...meta, 'agentarea/task_id': 'other' } }).then(
        () => assert.fail('not refused'),
        (e) => e,
      );
      assert.equal(refused.code, 403);
    } finally {
      await client.close();
    }
  } finally {
    child.kill();
  }
});
