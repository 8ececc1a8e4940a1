// What an operator sees, through the real OpenTelemetry SDKs
// (@opentelemetry/sdk-metrics and sdk-trace-base with their in-memory
// exporters, registered as the global providers): every vector file's
// verdicts through `verify` (the AIVAX files' through `AivaxVerifier.verify`,
// and through the middleware where they check what it hands on), counted
// by outcome and reason exactly as the runner judged them, each span naming
// the method and tool the core read (none before the body); the middleware and the fetch wrapper counting each
// request once (passes and refusals before the body included) with spans
// under the request's span; the names against the core's
// (crates/core/src/telemetry.rs); `onVerdict`; `telemetry: false`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { test } from 'node:test';

import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TELEMETRY, createVerifier, toolctx, withToolctx } from 'toolctx';
import { createAivaxVerifier } from 'toolctx/aivax';

import { coreCodes } from '../dist/wasm/node/toolctx_wasm_conventions.js';
import { nodeConventions, nodeVerdict, runVectors } from './vectors.mjs';

const VECTORS = new URL('../../tests/vectors/', import.meta.url);
const SECRET = 's'.repeat(32);
const INSTANCE = '0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f';

// Created before any provider is registered: it must still record once one is.
const early = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The SDK's `toolctx` metrics now, then both exporters emptied. */
async function collect() {
  exporter.reset();
  await reader.forceFlush();
  const scopes = exporter.getMetrics().flatMap((r) => r.scopeMetrics).filter((s) => s.scope.name === 'toolctx');
  const out = { scopes: scopes.map((s) => s.scope), metrics: new Map(), spans: spans.getFinishedSpans().filter((s) => s.name === 'toolctx.verify') };
  for (const s of scopes) for (const m of s.metrics) out.metrics.set(m.descriptor.name, m);
  spans.reset();
  return out;
}

/** `toolctx.verdicts` data points as `outcome[/reason]` -> count. */
function verdictCounts(collected, since = new Map()) {
  const counts = new Map();
  for (const p of collected.metrics.get('toolctx.verdicts')?.dataPoints ?? []) {
    const keys = Object.keys(p.attributes).sort();
    const reason = p.attributes['toolctx.reason'];
    // The reason is present on refusals only, never empty.
    if (p.attributes['toolctx.outcome'] === 'reject') assert.deepEqual(keys, ['toolctx.outcome', 'toolctx.reason']);
    else assert.deepEqual(keys, ['toolctx.outcome']);
    const key = reason === undefined ? p.attributes['toolctx.outcome'] : `reject/${reason}`;
    const n = p.value - (since.get(key) ?? 0);
    if (n !== 0) counts.set(key, n);
  }
  return counts;
}

function bump(map, key) {
  map.set(key, (map.get(key) ?? 0) + 1);
}

const sorted = (map) => [...map.entries()].sort(([a], [b]) => a.localeCompare(b));

test('the names are the core\'s, and the version the package\'s', () => {
  const core = JSON.parse(coreCodes()).telemetry;
  assert.deepEqual({ ...TELEMETRY, outcomes: [...TELEMETRY.outcomes], durationBucketsSeconds: [...TELEMETRY.durationBucketsSeconds] }, core);
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.peerDependencies['@opentelemetry/api'], '>=1.9.0 <2');
  assert.equal(pkg.peerDependenciesMeta['@opentelemetry/api'].optional, true);
});

test('nothing is recorded before a provider is registered; a verifier created before it records after', async () => {
  early.verify({ method: 'GET' });
  metrics.setGlobalMeterProvider(meterProvider);
  trace.setGlobalTracerProvider(tracerProvider);
  const before = await collect();
  assert.equal(before.metrics.size, 0, 'recorded without a provider');
  const t0 = performance.now();
  early.verify({ method: 'GET' });
  early.verify({ method: 'POST', headers: {}, body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}' });
  // The wall time around both checks, in seconds: each recorded duration
  // lies within it (a unit check, whatever the machine's speed).
  const wall = (performance.now() - t0) / 1000;
  const after = await collect();
  assert.deepEqual(after.scopes, [{ name: 'toolctx', version: pkg().version, schemaUrl: undefined }]);
  assert.deepEqual(sorted(verdictCounts(after)), [['pass', 1], ['reject/token_missing', 1]]);
  const duration = after.metrics.get('toolctx.check.duration');
  assert.equal(duration.descriptor.unit, 's');
  assert.deepEqual(duration.dataPoints.map((p) => p.attributes).sort((a, b) => a['toolctx.outcome'].localeCompare(b['toolctx.outcome'])), [
    { 'toolctx.outcome': 'pass' },
    { 'toolctx.outcome': 'reject' },
  ]);
  for (const p of duration.dataPoints) assert.ok(p.value.sum > 0 && p.value.sum <= wall, `a check in seconds (within ${wall} s), not ${p.value.sum}`);
  assert.deepEqual(
    after.spans.map((s) => [s.status.code, s.attributes['toolctx.outcome'], s.attributes['toolctx.reason']]).sort(),
    [
      [0, 'pass', undefined],
      [2, 'reject', 'token_missing'],
    ],
  );
});

function pkg() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
}

// Refused before the body was read (credential, size), and refused as not one strict JSON request.
const BEFORE_BODY = new Set(['credential_missing', 'credential_invalid', 'body_too_large']);
const NOT_ONE_REQUEST = new Set(['parse_error', 'duplicate_member', 'too_deep', 'batch_with_tools_call']);

/**
 * The method and tool a verdict's span must name: the body's `method` and
 * a `tools/call`'s `params.name`, where the core read one strict JSON
 * request (JSON.parse reads such a body as the core does); none otherwise.
 */
function expectedNames(req, r) {
  const reason = r.outcome === 'reject' ? r.reason : undefined;
  if (req.method !== 'POST' || BEFORE_BODY.has(reason) || NOT_ONE_REQUEST.has(reason)) return {};
  const doc = JSON.parse(typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8'));
  const short = (s) => (typeof s === 'string' && Buffer.byteLength(s) <= 256 ? s : undefined);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return {};
  const method = short(doc.method);
  const params = method === 'tools/call' && typeof doc.params === 'object' && doc.params !== null && !Array.isArray(doc.params) ? doc.params : {};
  return { method, tool: short(params.name) };
}

/** Checks the span just finished against `expectedNames`; what differs goes to `wrong`. */
function checkNames(req, r, wrong, label) {
  const all = spans.getFinishedSpans();
  const span = all[all.length - 1];
  const want = expectedNames(req, r);
  const got = { method: span.attributes['mcp.method.name'], tool: span.attributes['gen_ai.tool.name'] };
  if (got.method !== want.method || got.tool !== want.tool) wrong.push(`${label} ${r.reason ?? r.outcome}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  return got;
}

test('every vector file: the SDK counts exactly the verdicts the runner judged, by outcome and reason', async () => {
  await collect();
  const start = verdictCounts(await collect());
  const runner = new Map();
  let agentAreaAccepts = 0;
  const wrong = [];
  const named = new Map();
  const files = [VECTORS, new URL('conventions/', VECTORS)].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => new URL(f, dir).pathname)
      // A file that names a "format" (helpers, settings, memory store, store
      // address) is another format, with its own runner.
      .filter((path) => !('format' in JSON.parse(readFileSync(path, 'utf8')))),
  );
  const key = (r) => (r.outcome === 'reject' ? `reject/${r.reason}` : r.outcome);
  const log = console.log;
  let summary = '';
  let last;
  console.log = (line) => (summary = String(line));
  try {
    await runVectors(
      files,
      (opts, req, now) => {
        const r = nodeVerdict(opts, req, now);
        bump(runner, key(r));
        if (r.outcome === 'accept') agentAreaAccepts++;
        const got = checkNames(req, r, wrong, 'verify');
        bump(named, `${r.outcome} ${got.method ?? '-'} ${got.tool === undefined ? '-' : 'tool'}`);
        return r;
      },
      {
        table: nodeConventions.table,
        // `AivaxVerifier.verify` called directly records each case once.
        aivax(opts, req) {
          const r = nodeConventions.aivax(opts, req);
          bump(runner, key(r));
          checkNames(req, r, wrong, 'aivax verify');
          last = [req, r];
          return r;
        },
        // The middleware over an `AivaxVerifier`: one more request, counted once, by the middleware.
        async aivaxForwarded(opts, req) {
          const views = await nodeConventions.aivaxForwarded(opts, req);
          bump(runner, key(last[1]));
          checkNames(req, last[1], wrong, 'aivax middleware');
          return views;
        },
      },
      // The verdicts alone: the forwarded headers are the vector runner's
      // check (npm/test/vectors.mjs); a second pass through the middleware
      // here would count each request twice.
      async () => [],
    );
  } finally {
    console.log = log;
  }
  assert.match(summary, / 0 failed$/);
  assert.deepEqual(wrong, []);
  console.log(`vectors: spans by outcome, mcp.method.name and tool ${JSON.stringify(Object.fromEntries(sorted(named)))}`);
  // The files hold passes that name their method, and refusals before the body that name nothing.
  assert.ok(named.get('pass tools/list -') > 0 && named.get('pass - -') > 0, 'passes named and not');
  assert.ok([...named.keys()].some((k) => k.startsWith('reject tools/call tool')), 'a refusal after the body names its tool');
  const seen = await collect();
  const counts = verdictCounts(seen, start);
  const total = [...runner.values()].reduce((a, b) => a + b, 0);
  console.log(`vectors: ${summary}; runner ${total} verdicts ${JSON.stringify(Object.fromEntries(sorted(runner)))}`);
  console.log(`vectors: SDK toolctx.verdicts ${JSON.stringify(Object.fromEntries(sorted(counts)))}; spans ${seen.spans.length}`);
  assert.deepEqual(sorted(counts), sorted(runner));
  assert.equal(seen.spans.length, total);
  let tasks = 0;
  for (const s of seen.spans) {
    assert.equal(s.status.code, s.attributes['toolctx.outcome'] === 'reject' ? 2 : 0);
    if (s.attributes['toolctx.outcome'] === 'accept') {
      // AgentArea's accepted calls carry their task and workspace; AIVAX's have none.
      if (s.attributes['toolctx.task_id'] !== undefined) tasks++;
      assert.equal(typeof s.attributes['toolctx.task_id'], typeof s.attributes['toolctx.workspace_id']);
      assert.equal(s.attributes['mcp.method.name'], 'tools/call');
    } else assert.equal(s.attributes['toolctx.task_id'], undefined);
  }
  assert.equal(tasks, agentAreaAccepts);
  process.exitCode = 0;
});

/** A signed tools/call for `tool` (HS256 by hand, node:crypto). */
async function signedCall(tool, id) {
  const { createHmac } = await import('node:crypto');
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: 'agentarea',
    aud: INSTANCE,
    iat: now,
    exp: now + 60,
    task_id: 'task-1',
    tool_call_id: `call-${id}`,
    workspace_id: 'ws-1',
    idempotency_key: `task-1:call-${id}`,
    protocol: '1',
    tool,
  };
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signing = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  const token = `${signing}.${createHmac('sha256', SECRET).update(signing).digest('base64url')}`;
  const meta = Object.fromEntries(['task_id', 'tool_call_id', 'workspace_id', 'idempotency_key', 'protocol'].map((k) => [`agentarea/${k}`, claims[k]]));
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {}, _meta: meta } });
  return { token, body };
}

/** Sends the mix every entry point is checked with; returns the counts it should give. */
async function sendMix(url) {
  const ok = await signedCall('get_order', 1);
  const sent = [
    [{ method: 'GET' }, 'pass'],
    [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' }, 'pass'],
    [{ method: 'POST', headers: { 'x-api-key': 'nope' }, body: ok.body }, 'reject/credential_invalid'],
    [{ method: 'POST', headers: { 'x-api-key': 'k' }, body: ok.body }, 'reject/token_missing'],
    [{ method: 'POST', headers: { 'x-api-key': 'k', 'x-agentarea-context': ok.token }, body: ok.body }, 'accept'],
    [{ method: 'POST', headers: { 'x-api-key': 'k', 'x-agentarea-context': `${ok.token}x` }, body: ok.body }, 'reject/signature_invalid'],
  ];
  const expected = new Map();
  for (const [init, key] of sent) {
    const r = await fetch(url, init);
    await r.arrayBuffer();
    assert.equal(r.ok, key === 'pass' || key === 'accept', `${key}: HTTP ${r.status}`);
    bump(expected, key);
  }
  return expected;
}

const credential = { header: 'x-api-key', values: ['k'] };

/** Starts `server` on 127.0.0.1, sends the mix, and checks the SDK counted each request once. */
async function mixThrough(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  await collect();
  const start = verdictCounts(await collect());
  const expected = await sendMix(`http://127.0.0.1:${server.address().port}/mcp`);
  const seen = await collect();
  assert.deepEqual(sorted(verdictCounts(seen, start)), sorted(expected));
  assert.equal(seen.spans.length, 6);
  // Sent in this order, answered one by one: the method and tool the core
  // read, on passes and refusals after the body; nothing on a GET or a
  // refusal on the credential.
  const names = seen.spans
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((s) => [s.attributes['toolctx.reason'] ?? s.attributes['toolctx.outcome'], s.attributes['mcp.method.name'], s.attributes['gen_ai.tool.name']]);
  assert.deepEqual(names, MIX_NAMES);
  return seen;
}

/** What `sendMix`'s spans name, in order: outcome or reason, method, tool. */
const MIX_NAMES = [
  ['pass', undefined, undefined],
  ['pass', 'tools/list', undefined],
  ['credential_invalid', undefined, undefined],
  ['token_missing', 'tools/call', 'get_order'],
  ['accept', 'tools/call', 'get_order'],
  ['signature_invalid', 'tools/call', 'get_order'],
];

test('the middleware counts each request once, its spans are children of the request\'s', async () => {
  // The verifier records too when called directly: here the middleware must be the only one counting.
  const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], credential });
  const events = [];
  const mw = toolctx(verifier, { onVerdict: (e) => events.push(e) });
  const tracer = trace.getTracer('test');
  const parents = [];
  const server = createServer((req, res) =>
    tracer.startActiveSpan('http', (span) => {
      parents.push(span.spanContext().spanId);
      res.on('finish', () => span.end());
      mw(req, res, () => res.end('ok'));
    }),
  );
  try {
    const seen = await mixThrough(server);
    assert.deepEqual(new Set(seen.spans.map((s) => s.parentSpanContext?.spanId ?? s.parentSpanId)), new Set(parents));
    const accepted = seen.spans.find((s) => s.attributes['toolctx.outcome'] === 'accept');
    assert.equal(accepted.attributes['gen_ai.tool.name'], 'get_order');
    assert.equal(accepted.attributes['toolctx.workspace_id'], 'ws-1');
    assert.equal(events.length, 6);
    assert.deepEqual(events.map((e) => [e.reason ?? e.outcome, e.method, e.tool]), MIX_NAMES);
    const refused = events.filter((e) => e.outcome === 'reject');
    assert.deepEqual(refused.map((e) => [e.reason, e.status, e.entry]).sort(), [
      ['credential_invalid', 401, 'middleware'],
      ['signature_invalid', 401, 'middleware'],
      ['token_missing', 401, 'middleware'],
    ]);
    assert.ok(refused.every((e) => e.peer === '127.0.0.1'));
    assert.equal(refused.find((e) => e.reason === 'signature_invalid').requestId, 1);
    // Never a token, secret or credential value in an event.
    const text = JSON.stringify(events);
    for (const secret of [SECRET, 'nope', '"k"', 'eyJ']) assert.ok(!text.includes(secret), `${secret} in an event`);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('the fetch wrapper counts each request once, body reading inside the measured time', async () => {
  const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], credential });
  const events = [];
  const handler = withToolctx(verifier, () => new Response('ok'), { onVerdict: (e) => events.push(e) });
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = req.method === 'GET' ? undefined : Buffer.concat(chunks);
    const r = await handler(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body }));
    res.statusCode = r.status;
    res.end(Buffer.from(await r.arrayBuffer()));
  });
  try {
    await mixThrough(server);
    assert.deepEqual(events.map((e) => e.entry), Array(6).fill('fetch'));
    assert.deepEqual(events.map((e) => [e.reason ?? e.outcome, e.method, e.tool]), MIX_NAMES);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('telemetry: false records nothing; onVerdict still hears every verdict', async () => {
  const events = [];
  const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], telemetry: false, onVerdict: (e) => events.push(e) });
  await collect();
  const start = verdictCounts(await collect());
  const t0 = performance.now();
  verifier.verify({ method: 'GET' });
  verifier.verify({ method: 'POST', body: '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t"}}' });
  const wall = (performance.now() - t0) / 1000;
  const seen = await collect();
  assert.deepEqual(sorted(verdictCounts(seen, start)), []);
  assert.equal(seen.spans.length, 0);
  assert.deepEqual(
    events.map(({ durationSeconds, ...e }) => (assert.ok(durationSeconds >= 0 && durationSeconds <= wall, `${durationSeconds} s within ${wall} s`), e)),
    [
      { outcome: 'pass', entry: 'verify' },
      { outcome: 'reject', reason: 'token_missing', status: 401, requestId: 'x', method: 'tools/call', tool: 't', entry: 'verify' },
    ],
  );
  // The fetch wrapper (and the middleware) default to the verifier's settings.
  const answered = await withToolctx(verifier, () => new Response('ok'))(new Request('http://127.0.0.1/mcp'));
  assert.equal(await answered.text(), 'ok');
  assert.deepEqual(events.slice(2).map(({ outcome, entry }) => [outcome, entry]), [['pass', 'fetch']]);
  assert.equal((await collect()).spans.length, 0);
  assert.throws(() => createVerifier({ instanceId: INSTANCE, secrets: [SECRET], onVerdict: 'no' }), { code: 'config_type' });
});

test('an AivaxVerifier called directly records as a Verifier does: onVerdict with the method and tool, telemetry: false', async () => {
  const events = [];
  const v = createAivaxVerifier({ hookKey: 'aivax-hook-key-5f1c9e2a', requireNonce: false, telemetry: false, onVerdict: (e) => events.push(e) });
  await collect();
  const start = verdictCounts(await collect());
  v.verify({ method: 'GET' });
  v.verify({ method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
  // AIVAX's context names no tool: the core reads it from the body.
  v.verify({ method: 'POST', body: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather"}}' });
  v.verify({ method: 'POST', body: '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","_meta":{"_aiv_moment":5}}}' });
  const head = v.checkHeaders({ method: 'GET', headers: {} });
  assert.equal(head.outcome, 'pass');
  const seen = await collect();
  assert.deepEqual(sorted(verdictCounts(seen, start)), []);
  assert.equal(seen.spans.length, 0);
  assert.deepEqual(
    events.map((e) => [e.entry, e.reason ?? e.outcome, e.method, e.tool, e.requestId]),
    [
      ['verify', 'pass', undefined, undefined, undefined],
      ['verify', 'pass', 'tools/list', undefined, undefined],
      ['verify', 'accept', 'tools/call', 'get_weather', 2],
      ['verify', 'context_malformed', 'tools/call', 'get_weather', 3],
      ['verify', 'pass', undefined, undefined, undefined],
    ],
  );
  v.free();
  assert.throws(() => createAivaxVerifier({ hookKey: 'k', onVerdict: 'no' }), { code: 'config_type' });
  assert.throws(() => createAivaxVerifier({ hookKey: 'k', telemetry: 'yes' }), { code: 'config_type' });
});
