// Packaging check: `npm pack` the built package, install the tarball into a
// temporary project and import it as a user would (ESM; no CJS build is
// offered, and `require()` of the package works where Node has
// `require(esm)`: 20.19+ and 22), through each `exports` condition; its
// declarations type-check a consumer under `node16` and `bundler`
// resolution. Run with `node --test npm/test/pack.mjs`; scripts/release runs
// it under Node 20 and 22 on the release tarball (TOOLCTX_TARBALL).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { freePort } from './processes.mjs';
import { clients } from './sdks.mjs';
import { INSTANCE, SECRET, callContext, connect, mint } from './support.mjs';

const npmDir = join(dirname(fileURLToPath(import.meta.url)), '..');
// The verifier's module (crates/wasm), which `toolctx` and `toolctx/worker`
// load: what every user ships. 110,129 bytes raw and 48,350 gzip until the
// core decided the forwarded headers (CONTRACT §7) and the replay cache;
// 169,549 raw and 79,362 gzip with RFC 8785 numbers through f64 parsing and
// ryu-js. 128,606 raw and 54,968 gzip since the core writes those numbers
// from their text (issue 32: no dec2flt, ryu-js or std sort, a heap for the
// replay cache's expiry, describe() without derived Debug); 130,237 raw and
// 56,027 gzip with the raw module's shared boundary. Back within the budget
// users were promised, 120 KB raw and 50 KB gzip, at 119,510 raw and 50,821
// gzip: no B-tree left (the replay cache's ids in a hash table, the
// reader's duplicate check for large objects by one sort), integers
// written without core::fmt, no custom sections (issue 32); 120,248 raw and
// 51,182 gzip with the request written into the module's memory and the
// accepted context as a record (issue 32, the boundary), after one
// non-inlined `internal` error; 119,956 raw and 51,021 gzip with the
// core's speed-up (issue 32: `_meta` read once; its native-only parts
// left out of wasm). The budget is the promise, not the
// measure plus headroom: a change that crosses it cuts elsewhere first.
const RAW_BUDGET = 120 * 1024;
const GZIP_BUDGET = 50 * 1024;
// The conventions module (crates/wasm-conventions: tool names, RFC 8785, the
// Tuix key, the AIVAX verifier with bcrypt, and since issue 29 the server
// helpers' rules: idempotency, result limits, progress), loaded only by
// `toolctx/conventions`, `toolctx/aivax` and `toolctx/helpers`. 154,215 bytes
// raw and 74,877 gzip when the modules were split; 161,156 raw and 70,742
// gzip with the helpers' rules in and the core's own RFC 8785 numbers; the
// budget leaves about 6% and 7% of headroom. 166,524 raw and 72,971 gzip
// before the core's in-memory idempotency store moved in (issue 40);
// 172,227 raw and 75,286 gzip with it (its B-tree-free form and one method
// across the boundary: three B-trees cost 11 KB gzip), the raw budget
// restated above it.
const CONVENTIONS_RAW_BUDGET = 172 * 1024;
const CONVENTIONS_GZIP_BUDGET = 74 * 1024;

let work;
let project;
let files;

const node = (args, cwd = project) => execFileSync(process.execPath, args, { cwd, encoding: 'utf8' });

before(() => {
  work = mkdtempSync(join(tmpdir(), 'toolctx-pack-'));
  const given = process.env.TOOLCTX_TARBALL;
  let info;
  if (given) {
    // A tarball already packed (scripts/release): its file list from tar.
    const listed = execFileSync('tar', ['-tzf', given], { encoding: 'utf8' }).split('\n');
    info = { filename: given, files: listed.filter((f) => f && !f.endsWith('/')).map((f) => ({ path: f.replace(/^package\//, '') })) };
  } else {
    [info] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: npmDir, encoding: 'utf8' }));
  }
  files = info.files.map((f) => f.path);
  project = join(work, 'app');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', resolve(work, info.filename)], {
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
    'dist/node/index.js',
    'dist/node/index.d.ts',
    'dist/web/index.js',
    'dist/web/index.d.ts',
    'dist/wasm/node/toolctx_wasm.js',
    'dist/wasm/node/toolctx_wasm_bg.wasm',
    'dist/wasm/web/toolctx_wasm.js',
    'dist/wasm/web/toolctx_wasm_bg.wasm',
    'dist/web/conventions.js',
    'dist/node/conventions.js',
    'dist/web/conventions.d.ts',
    'dist/web/aivax.js',
    'dist/node/aivax.js',
    'dist/web/aivax.d.ts',
    'dist/wasm/node/toolctx_wasm_conventions.js',
    'dist/wasm/node/toolctx_wasm_conventions_bg.wasm',
    'dist/wasm/web/toolctx_wasm_conventions.js',
    'dist/wasm/web/toolctx_wasm_conventions_bg.wasm',
  ]) {
    assert.ok(files.includes(f), `${f} missing from the tarball`);
  }
  const stray = files.filter((f) => !(f.startsWith('dist/') || f === 'package.json' || f === 'README.md'));
  assert.deepEqual(stray, []);
  const pkg = JSON.parse(readFileSync(join(project, 'node_modules/toolctx/package.json'), 'utf8'));
  assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependency');
});

function wasmSize(stem) {
  const wasm = join(project, `node_modules/toolctx/dist/wasm/node/${stem}_bg.wasm`);
  const raw = statSync(wasm).size;
  const gz = gzipSync(readFileSync(wasm), { level: 9 }).length;
  console.log(`${stem}: ${raw} bytes raw, ${gz} bytes gzip`);
  return { raw, gz };
}

test(`the verifier's wasm is within budget (${RAW_BUDGET} bytes raw, ${GZIP_BUDGET} gzip)`, () => {
  const { raw, gz } = wasmSize('toolctx_wasm');
  assert.ok(raw <= RAW_BUDGET, `${raw} bytes raw`);
  assert.ok(gz <= GZIP_BUDGET, `${gz} bytes gzip`);
});

test(`the conventions' wasm is within its budget (${CONVENTIONS_RAW_BUDGET} bytes raw, ${CONVENTIONS_GZIP_BUDGET} gzip)`, () => {
  const { raw, gz } = wasmSize('toolctx_wasm_conventions');
  assert.ok(raw <= CONVENTIONS_RAW_BUDGET, `${raw} bytes raw`);
  assert.ok(gz <= CONVENTIONS_GZIP_BUDGET, `${gz} bytes gzip`);
});

test('the exports conditions pick the right entry', () => {
  const resolve = (conditions) =>
    node([...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', 'console.log(import.meta.resolve("toolctx"))']).trim();
  assert.match(resolve([]), /\/dist\/node\/index\.js$/);
  for (const c of ['workerd', 'worker', 'browser']) assert.match(resolve([c]), /\/dist\/web\/index\.js$/, c);
  const explicit = node(['--input-type=module', '-e', 'console.log(import.meta.resolve("toolctx/worker"))']).trim();
  assert.match(explicit, /\/dist\/web\/index\.js$/);
  for (const sub of ['conventions', 'aivax']) {
    const at = (conditions) =>
      node([...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', `console.log(import.meta.resolve("toolctx/${sub}"))`]).trim();
    assert.match(at([]), new RegExp(`/dist/node/${sub}\\.js$`));
    for (const c of ['workerd', 'worker', 'browser']) assert.match(at([c]), new RegExp(`/dist/web/${sub}\\.js$`), `${sub} ${c}`);
  }
});

/** The sizes of the `.wasm` files compiled by a program importing `specifiers` (the glue or the loader compiles each). */
function wasmLoaded(specifiers, conditions = []) {
  const probe = `
const seen = new Set();
WebAssembly.Module = new Proxy(WebAssembly.Module, {
  construct(real, args) { seen.add(args[0].byteLength); return Reflect.construct(real, args); },
});
await Promise.all(${JSON.stringify(specifiers)}.map((s) => import(s)));
console.log(JSON.stringify([...seen]));
`;
  return JSON.parse(node([...conditions, '--input-type=module', '-e', probe]));
}

test('the main entries load the verifier\'s wasm only; the subpaths load the conventions module', () => {
  writeWasmLoader();
  const size = (stem) => statSync(join(project, `node_modules/toolctx/dist/wasm/node/${stem}_bg.wasm`)).size;
  const verifier = size('toolctx_wasm');
  const conventions = size('toolctx_wasm_conventions');
  for (const conditions of [[], ['--conditions=workerd', '--import', './register.mjs']]) {
    assert.deepEqual(wasmLoaded(['toolctx'], conditions), [verifier], conditions.join(' '));
    assert.deepEqual(wasmLoaded(['toolctx/conventions'], conditions), [conventions], conditions.join(' '));
    assert.deepEqual(wasmLoaded(['toolctx/aivax', 'toolctx/conventions', 'toolctx/helpers'], conditions), [conventions], conditions.join(' '));
  }
  assert.deepEqual(wasmLoaded(['toolctx/worker'], ['--import', './register.mjs']), [verifier], 'toolctx/worker');
});

const SMOKE = `
import { createVerifier, ToolctxError, contextFrom } from 'toolctx';
import { createAivaxVerifier } from 'toolctx/aivax';
import { qualifiedToolName } from 'toolctx/conventions';
const v = createVerifier({ instanceId: 'i', secrets: ['0123456789abcdef0123456789abcdef'] });
const r = v.verify({ method: 'POST', headers: [], body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}' }, { now: 1 });
let code;
try { createVerifier({ instanceId: 'i', secrets: ['short'] }); } catch (e) { code = e instanceof ToolctxError && e.code; }
const aivax = createAivaxVerifier({ hookKey: 'k' }).verify({ method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}' }).reason;
console.log(JSON.stringify({ reason: r.reason, status: r.status, code, none: contextFrom({ authInfo: undefined }) ?? null, shown: String(v).includes('0123456789abcdef'), name: qualifiedToolName('My GitHub!', 'x'), aivax }));
`;

test('Node imports the package synchronously and it verifies', () => {
  const out = JSON.parse(node(['--input-type=module', '-e', SMOKE]));
  assert.deepEqual(out, { reason: 'token_missing', status: 401, code: 'secret_length', none: null, shown: false, name: 'mcp__my_github___x', aivax: 'nonce_missing' });
});

// ESM only is a choice (README, "Install"): CommonJS callers load the package
// with require(), which Node supports for ES modules without top-level await
// from 20.19 and 22.12 on, unflagged.
test('require() from CommonJS loads every entry and it verifies', () => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19) || (major === 22 && minor < 12)) {
    assert.fail(`Node ${process.versions.node} has no unflagged require(esm); the package needs 20.19+ or 22.12+ for require()`);
  }
  writeFileSync(
    join(project, 'cjs.cjs'),
    `const { createVerifier } = require('toolctx');
// toolctx/worker is for workers and bundlers (it imports its .wasm as a module), not Node.
const subpaths = ['toolctx/conventions', 'toolctx/aivax', 'toolctx/helpers'].filter((s) => Object.keys(require(s)).length === 0);
const r = createVerifier({ instanceId: 'i', secrets: ['0123456789abcdef0123456789abcdef'] })
  .verify({ method: 'POST', headers: [], body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}' }, { now: 1 });
console.log(JSON.stringify({ reason: r.reason, subpaths }));
`,
  );
  // No ExperimentalWarning either: it is stable on both lines.
  const out = execFileSync(process.execPath, ['cjs.cjs'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.deepEqual(JSON.parse(out), { reason: 'token_missing', subpaths: [] });
});

// The type-level tests (npm/test/types) against the installed declarations,
// as a consumer's tsc resolves them: Node's ESM rules (node16) and a
// bundler's (bundler, with module preserve).
test('the declarations type-check a consumer under node16 and bundler resolution', () => {
  linkExampleDependencies();
  // @opentelemetry: the optional peer, installed as a consumer who records telemetry has it.
  for (const dep of ['express', 'redis', '@types', '@opentelemetry']) {
    const at = join(project, 'node_modules', dep);
    if (!existsSync(at)) symlinkSync(join(npmDir, 'node_modules', dep), at);
  }
  const sources = ['usage.ts', 'helpers.ts', 'helpers-v2.ts'];
  for (const f of sources) writeFileSync(join(project, f), readFileSync(join(npmDir, 'test/types', f)));
  const base = { target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: false, types: ['node'] };
  for (const [name, options] of [
    ['node16', { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', { module: 'preserve', moduleResolution: 'bundler' }],
  ]) {
    writeFileSync(join(project, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: { ...base, ...options }, files: sources }));
    try {
      execFileSync(process.execPath, [join(npmDir, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      assert.fail(`tsc (${name}):\n${e.stdout}${e.stderr}`);
    }
  }
});

/** Emulates workerd and bundlers: a `.wasm` import yields a WebAssembly.Module (`--import ./register.mjs`). */
function writeWasmLoader() {
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
}

test('the worker entry instantiates with initSync from an imported WebAssembly.Module', () => {
  writeWasmLoader();
  const out = JSON.parse(node(['--conditions=workerd', '--import', './register.mjs', '--input-type=module', '-e', SMOKE]));
  assert.deepEqual(out, { reason: 'token_missing', status: 401, code: 'secret_length', none: null, shown: false, name: 'mcp__my_github___x', aivax: 'nonce_missing' });
});

test('toolctx/helpers resolves from the tarball: node:crypto and the Node wasm in Node; Web Crypto and the imported conventions module under the worker conditions, one instance shared with toolctx/conventions', () => {
  writeWasmLoader();
  const probe = `
import * as h from 'toolctx/helpers';
import { canonicalJson } from 'toolctx/conventions';
const hash = await h.canonicalHash({ b: 1, a: 2 });
const same = h.canonicalJson({ b: [1.0, 'é'], a: null }) === canonicalJson({ a: null, b: [1, 'é'] });
console.log(JSON.stringify({ names: ['idempotent', 'memoryIdempotencyStore', 'redisIdempotencyStore', 'progress', 'checkResult', 'cancellable', 'noticeCancelled'].filter((n) => typeof h[n] !== 'function'), hash, same }));
`;
  const want = createHash('sha256').update('{"a":2,"b":1}').digest('hex');
  for (const [conditions, entry] of [
    [[], /\/dist\/node\/helpers\.js$/],
    [['--conditions=workerd', '--import', './register.mjs'], /\/dist\/web\/helpers\.js$/],
    [['--conditions=browser', '--import', './register.mjs'], /\/dist\/web\/helpers\.js$/],
  ]) {
    const out = JSON.parse(node([...conditions, '--input-type=module', '-e', probe]));
    assert.deepEqual(out.names, []);
    assert.equal(out.hash, want);
    assert.equal(out.same, true);
    const resolved = node([...conditions, '--input-type=module', '-e', 'console.log(import.meta.resolve("toolctx/helpers"))']).trim();
    assert.match(resolved, entry);
  }
  assert.ok(['dist/web/helpers.js', 'dist/node/helpers.js', 'dist/helpers-common.js', 'dist/web/helpers.d.ts'].every((f) => files.includes(f)));
});

/** The first ```js block after `heading` in the README. */
function readmeExample(heading) {
  const readme = readFileSync(join(npmDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  return section.slice(section.indexOf('```js\n') + 6, section.indexOf('\n```', section.indexOf('```js\n')));
}

/** The examples' other dependencies (both SDK lines), from this package's dev dependencies. */
function linkExampleDependencies() {
  mkdirSync(join(project, 'node_modules/@modelcontextprotocol'), { recursive: true });
  for (const dep of ['@modelcontextprotocol/sdk', '@modelcontextprotocol/server', '@modelcontextprotocol/node', 'zod']) {
    if (!existsSync(join(project, 'node_modules', dep))) symlinkSync(join(npmDir, 'node_modules', dep), join(project, 'node_modules', dep));
  }
}

/** Runs `file` from the test project with `env` and a free PORT; collects its stdout. */
async function startExample(file, env) {
  const port = await freePort();
  const child = spawn(process.execPath, [file], {
    cwd: project,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  return { child, url: `http://127.0.0.1:${port}/mcp`, stdout: () => Buffer.concat(output).toString('utf8') };
}

/** `connect(headers)` (a client of sdks.mjs, or the v1 SDK's), retried while the example server is still starting. */
async function connectWhenUp({ child, url }, headers, connectTo = (u, h) => connect(u, h)) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await connectTo(url, headers);
    } catch (e) {
      if (attempt >= 50 || child.exitCode !== null) throw e;
      await new Promise((r) => setTimeout(r, 100)); // the server is still starting
    }
  }
}

// The two 15-line servers: SDK v1 with its (2025) client; SDK v2 with a
// 2026-07-28 client and a 2025 one.
for (const { heading, sdk, kinds } of [
  { heading: '## An MCP server in 15 lines', sdk: /@modelcontextprotocol\/sdk/, kinds: ['v1'] },
  { heading: '## MCP SDK v2', sdk: /@modelcontextprotocol\/server/, kinds: ['v2-modern', 'v1'] },
]) {
  test(`the README example under "${heading.slice(3)}" runs as written: ${kinds.map((k) => clients[k].name).join(' and ')} get the context, a mismatch is refused 403`, async () => {
    const code = readmeExample(heading);
    assert.ok(code.split('\n').length <= 17, 'the example grew');
    assert.match(code, sdk);
    writeFileSync(join(project, 'server.mjs'), code);
    linkExampleDependencies();
    const secret = 'readme-example-secret-0123456789abcdef';
    const instance = 'readme-instance';
    const example = await startExample('server.mjs', { TOOLCTX_INSTANCE_ID: instance, TOOLCTX_SECRET: secret });
    try {
      const now = Math.floor(Date.now() / 1000);
      const ctx = { protocol: '1', task_id: 'task-1', tool_call_id: 'call-1', workspace_id: 'ws-1', idempotency_key: 'task-1:call-1' };
      const token = mint({ iss: 'agentarea', aud: instance, iat: now, exp: now + 300, ...ctx }, secret);
      const meta = Object.fromEntries(Object.entries(ctx).map(([k, v]) => [`agentarea/${k}`, v]));
      for (const kind of kinds) {
        const client = await connectWhenUp(example, { 'x-agentarea-context': token }, (u, h) => clients[kind].connect(u, h));
        try {
          const result = await client.callTool({ name: 'get_order', arguments: { orderId: 'A-17' }, _meta: meta });
          assert.equal(result.content[0].text, 'order A-17 for task task-1', kind);
          const { status, json } = await client.refused({ name: 'get_order', arguments: { orderId: 'A-17' }, _meta: { ...meta, 'agentarea/task_id': 'other' } });
          assert.equal(status, 403, kind);
          assert.equal(json.error.data.reason, 'meta_mismatch', kind);
        } finally {
          await client.close();
        }
      }
    } finally {
      example.child.kill();
    }
  });
}

test('the README helpers example runs as written: a retry is replayed, progress ends at total', async () => {
  writeFileSync(join(project, 'helpers-server.mjs'), readmeExample('## Server helpers'));
  writeFileSync(
    join(project, 'payments.mjs'),
    'export async function chargeCard(orderId, amount) { console.log(`charged ${orderId} ${amount}`); return { id: `r-${orderId}` }; }\n',
  );
  linkExampleDependencies();
  const example = await startExample('helpers-server.mjs', { TOOLCTX_INSTANCE_ID: INSTANCE, TOOLCTX_SECRET: SECRET });
  try {
    const call = async (ctx) => {
      const c = callContext({ tool: 'charge', ctx });
      const client = await connectWhenUp(example, { 'x-agentarea-context': c.token });
      const progress = [];
      try {
        const result = await client.callTool({ name: 'charge', arguments: { orderId: 'A-17', amount: 5 }, _meta: c.meta }, undefined, {
          onprogress: (p) => progress.push(p),
        });
        return { result, progress, ctx: c.ctx };
      } finally {
        await client.close();
      }
    };
    const first = await call();
    assert.deepEqual(first.result.structuredContent, { orderId: 'A-17', receipt: 'r-A-17' });
    assert.deepEqual(first.progress.at(-1), { progress: 2, total: 2, message: 'charged' });
    const retry = await call(first.ctx);
    assert.equal(retry.result._meta['agentarea/replayed'], true);
    assert.deepEqual(retry.result.structuredContent, first.result.structuredContent);
    assert.equal(example.stdout().match(/charged A-17 5/g)?.length, 1, 'the card was charged more than once');
  } finally {
    example.child.kill();
  }
});
