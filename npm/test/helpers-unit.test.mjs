// toolctx/helpers without a server: canonical JSON against the repository's
// vectors, the in-memory store, the idempotency wrapper's edges, progress
// with an injected clock, result limits, cancellation timeouts. Imports the
// BUILT package (npm/dist): the worker flavour (dist/web/helpers.js, whose
// `.wasm` import the hooks in wasm-modules.mjs load) and the Node one.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import './wasm-modules.mjs';
import { callContext, fakeClock } from './support.mjs';

const {
  LIMITS,
  cancellable,
  canonicalHash,
  canonicalJson,
  checkResult,
  createCancelRegistry,
  errorResult,
  idempotent,
  idempotencyStoreKey,
  image,
  jsonResult,
  memoryIdempotencyStore,
  noticeCancelled,
  redisIdempotencyStore,
  progress,
  textResult,
  toolResult,
  withLimits,
} = await import('../dist/web/helpers.js');
const forNode = await import('toolctx/helpers');

/** A tool handler's `extra` as the SDK builds it after the toolctx middleware. */
function extraFor(ctx, more = {}) {
  return { authInfo: { extra: { toolctx: { ...ctx, iat: 1, exp: 2, secret_index: 0 } } }, signal: new AbortController().signal, ...more };
}

describe('canonical JSON', () => {
  test('RFC 8785 sample (the core\'s jcs test)', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    assert.equal(
      canonicalJson(input),
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  test('the same form as the Rust core: the Tuix key vectors (tests/vectors/conventions/tuix_keys.json)', () => {
    const { cases } = JSON.parse(readFileSync(new URL('../../tests/vectors/conventions/tuix_keys.json', import.meta.url), 'utf8'));
    assert.ok(cases.length > 0);
    for (const c of cases) {
      const args = JSON.parse(c.arguments);
      const kept = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== ''));
      const text = canonicalJson({ arguments: kept, sessionId: c.session_id, tool: c.tool, turn: c.turn });
      assert.equal(createHash('sha256').update(text).digest('hex'), c.expected, c.name);
    }
  });

  test('member order never changes the hash; UTF-16 order of names; undefined members left out; non-finite numbers refused', async () => {
    assert.equal(await canonicalHash({ b: 1, a: [1, { d: 2, c: 3 }] }), await canonicalHash({ a: [1, { c: 3, d: 2 }], b: 1 }));
    assert.notEqual(await canonicalHash({ a: [1, 2] }), await canonicalHash({ a: [2, 1] }));
    assert.equal(canonicalJson({ '\u{1F600}': 1, '\uFB01': 2 }), '{"\u{1F600}":1,"\uFB01":2}'); // surrogates sort before U+FB01
    assert.equal(canonicalJson({ a: undefined, b: -0, c: 1.0 }), '{"b":0,"c":1}');
    assert.throws(() => canonicalJson({ a: Infinity }), TypeError);
    assert.throws(() => canonicalJson({ a: 1n }), TypeError);
    assert.equal(await canonicalHash({}), createHash('sha256').update('{}').digest('hex'));
  });

  test('the Node entry and the web entry hash alike (the core\'s hash)', async () => {
    for (const v of [{}, { b: [1, 'é', null], a: { '\u{1F600}': true } }, 'x', 0.1]) {
      assert.equal(await forNode.canonicalHash(v), await canonicalHash(v));
    }
    // One hash, the core's, in both flavours: one wrapper too.
    assert.equal(forNode.idempotent, idempotent);
    assert.equal(forNode.memoryIdempotencyStore, memoryIdempotencyStore);
  });
});

describe('memoryIdempotencyStore', () => {
  const running = (owner) => ({ state: 'running', hash: 'h', owner });

  test('claims once, expires by TTL, evicts the least recently used', async () => {
    let now = 0;
    const store = memoryIdempotencyStore({ maxEntries: 2, now: () => now });
    assert.equal(await store.claim('a', running('1'), 100), null);
    assert.deepEqual(await store.claim('a', running('2'), 100), running('1'));
    now = 100; // the lease ran out
    assert.equal(await store.claim('a', running('2'), 100), null);
    await store.complete('a', { state: 'done', hash: 'h', result: { content: [] } }, 1000);
    assert.equal(await store.claim('b', running('3'), 1000), null);
    assert.equal((await store.claim('a', running('4'), 1000)).state, 'done'); // touches a: b is now the oldest
    assert.equal(await store.claim('c', running('5'), 1000), null); // evicts b
    assert.equal(store.size, 2);
    assert.equal(await store.claim('b', running('6'), 1000), null, 'b was not evicted');
  });

  test('release drops only the caller\'s own claim', async () => {
    const store = memoryIdempotencyStore();
    await store.claim('k', running('1'), 1000);
    await store.release('k', running('2'));
    assert.deepEqual(await store.claim('k', running('3'), 1000), running('1'));
    await store.release('k', running('1'));
    assert.equal(await store.claim('k', running('3'), 1000), null);
  });
});

describe('idempotent', () => {
  test('over a Redis that never answers, the call fails once timeoutMs is up and the tool does not run', async (t) => {
    // The timers are mocked: the failure comes when timeoutMs is up and not
    // a millisecond before, however fast the machine is.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    let runs = 0;
    const tool = idempotent(async () => ({ content: [], run: ++runs }), { store: redisIdempotencyStore(() => new Promise(() => {}), { timeoutMs: 50 }) });
    let failure;
    const settled = tool({ a: 1 }, extraFor(callContext().ctx)).then(
      () => (failure = 'ran'),
      (e) => (failure = e),
    );
    await turn();
    t.mock.timers.tick(49);
    await turn();
    assert.equal(failure, undefined, 'failed before the 50 ms bound');
    t.mock.timers.tick(1);
    await settled;
    t.mock.timers.reset();
    assert.equal(failure.code, 'idempotency_store_failed');
    assert.match(failure.message, /redis: no reply within 50 ms \(SET\)/);
    assert.ok(failure.cause instanceof Error);
    assert.equal(runs, 0);
  });

  test('timeoutMs is the core\'s to read: 0 its default, whole milliseconds up to 60,000', () => {
    const client = () => Promise.resolve(null);
    for (const timeoutMs of [undefined, 0, 1, 1.5, 60000]) redisIdempotencyStore(client, { timeoutMs });
    // The core's code and message (a check of the package's own would answer another message).
    const refused = (e) => e.code === 'limit_out_of_range' && e.message === 'setting `store_timeout_ms` is out of range';
    for (const timeoutMs of [-1, 0.4, 60000.5, 2 ** 31, Number.NaN, Infinity]) {
      assert.throws(() => redisIdempotencyStore(client, { timeoutMs }), refused, String(timeoutMs));
    }
    assert.throws(() => redisIdempotencyStore(client, { timeoutMs: '100' }), (e) => e.code === 'config_type');
  });

  test('a call without verified context is refused (the tool does not run) unless plain calls are allowed', async () => {
    let runs = 0;
    const handler = async () => ({ content: [], run: ++runs });
    for (const idem of [idempotent, forNode.idempotent]) {
      const tool = idem(handler);
      // SDK v1's extra and SDK v2's ctx without a context.
      for (const extra of [{ signal: new AbortController().signal }, { mcpReq: { id: 1, signal: new AbortController().signal } }]) {
        const refused = await tool({ a: 1 }, extra);
        assert.equal(refused.isError, true);
        assert.equal(refused._meta['toolctx/idempotency'], 'unverified');
        assert.match(refused.content[0].text, /no verified toolctx context/);
      }
      const custom = await idem(handler, { refuse: (outcome, key) => ({ outcome, key }) })({}, { signal: undefined });
      assert.deepEqual(custom, { outcome: 'unverified', key: '' });
    }
    assert.equal(runs, 0);
    const plain = idempotent(handler, { allowUnverified: true });
    await plain({ a: 1 }, { signal: undefined });
    await plain({ a: 1 }, { mcpReq: { id: 2 } });
    assert.equal(runs, 2, 'allowUnverified runs every plain call, unguarded');
  });

  test('something that is not a tool handler\'s extra or ctx is a clear error, never an unguarded run', async () => {
    let runs = 0;
    const tool = idempotent(async () => ({ content: [], run: ++runs }), { allowUnverified: true });
    for (const notACall of [undefined, {}, { orderId: 'x' }]) {
      await assert.rejects(tool({}, notACall), (e) => e.code === 'invalid_argument' && /idempotent: expected the tool handler's second argument/.test(e.message));
    }
    assert.equal(runs, 0);
  });

  test('SDK v2\'s ctx: a retry with the same key is replayed, the tool runs once', async () => {
    let runs = 0;
    const tool = forNode.idempotent(async ({ amount }) => ({ content: [{ type: 'text', text: `charged ${amount}` }], run: ++runs }));
    const { ctx } = callContext();
    const v2 = (c) => ({ mcpReq: { id: 1, signal: new AbortController().signal }, http: { authInfo: extraFor(c).authInfo } });
    const first = await tool({ amount: 5 }, v2(ctx));
    const retry = await tool({ amount: 5 }, v2(ctx));
    assert.equal(runs, 1);
    assert.equal(first._meta, undefined);
    assert.equal(retry._meta['agentarea/replayed'], true);
    const conflict = await tool({ amount: 6 }, v2(ctx));
    assert.equal(conflict._meta['toolctx/idempotency'], 'conflict');
    assert.equal(runs, 1);
  });

  test('a handler that throws releases its claim: the retry runs', async () => {
    let runs = 0;
    const tool = idempotent(async () => {
      runs += 1;
      if (runs === 1) throw new Error('flaky');
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const { ctx } = callContext();
    await assert.rejects(tool({}, extraFor(ctx)), /flaky/);
    const second = await tool({}, extraFor(ctx));
    assert.equal(second._meta, undefined);
    const third = await tool({}, extraFor(ctx));
    assert.equal(third._meta['agentarea/replayed'], true);
    assert.equal(runs, 2);
  });

  test('an isError result is stored and replayed (the tool ran)', async () => {
    let runs = 0;
    const tool = idempotent(async () => (runs++, errorResult('card declined')));
    const { ctx } = callContext();
    await tool({}, extraFor(ctx));
    const again = await tool({}, extraFor(ctx));
    assert.equal(again.isError, true);
    assert.equal(again._meta['agentarea/replayed'], true);
    assert.equal(runs, 1);
  });

  test('a duplicate gives up after waitMs while the first call still runs, or at once when it is cancelled', async () => {
    let release;
    const gate = new Promise((r) => (release = r));
    const store = memoryIdempotencyStore();
    const handler = async () => (await gate, { content: [] });
    const { ctx } = callContext();
    const first = idempotent(handler, { store })({}, extraFor(ctx));
    const impatient = await idempotent(handler, { store, waitMs: 30 })({}, extraFor(ctx));
    assert.equal(impatient.isError, true);
    assert.equal(impatient._meta['toolctx/idempotency'], 'in_progress');
    const abort = new AbortController();
    const patient = idempotent(handler, { store, waitMs: 600_000 })({}, extraFor(ctx, { signal: abort.signal }));
    abort.abort();
    assert.equal((await patient)._meta['toolctx/idempotency'], 'in_progress');
    release();
    assert.equal((await first)._meta, undefined);
  });

  test('a store error after the tool ran never escapes: input_required, a throw, a finished call', async () => {
    const seen = [];
    const store = (fail) => ({
      claim: async () => null,
      complete: async () => (fail === 'complete' ? Promise.reject(new Error('complete failed')) : undefined),
      release: () => (fail === 'release-sync' ? (() => { throw new Error('release threw'); })() : Promise.reject(new Error('release failed'))),
    });
    const { ctx } = callContext();
    const asks = { resultType: 'input_required', inputRequests: {} };
    const onStoreError = (e) => seen.push(e.message);
    assert.equal(await idempotent(async () => asks, { store: store('release'), onStoreError })({}, extraFor(ctx)), asks);
    assert.equal(await idempotent(async () => asks, { store: store('release-sync'), onStoreError })({}, extraFor(ctx)), asks);
    await assert.rejects(idempotent(async () => { throw new Error('the tool failed'); }, { store: store('release'), onStoreError })({}, extraFor(ctx)), /the tool failed/);
    assert.deepEqual(await idempotent(async () => ({ content: [] }), { store: store('complete'), onStoreError })({}, extraFor(ctx)), { content: [] });
    // A hook that throws changes nothing either.
    const throwing = () => { throw new Error('hook'); };
    assert.equal(await idempotent(async () => asks, { store: store('release'), onStoreError: throwing })({}, extraFor(ctx)), asks);
    assert.deepEqual(seen, ['release failed', 'release threw', 'release failed', 'complete failed']);
  });

  test('a malformed stored entry is a clear refusal (idempotency_entry_invalid), the tool does not run', async () => {
    let runs = 0;
    const { ctx } = callContext();
    const held = [
      { state: 'done', hash: 'h' }, // no result
      { state: 'running', hash: 'h' }, // no owner
      { state: 'gone', hash: 'h', owner: 'o' },
      { state: 'done', hash: 5, result: {} },
      ['state', 'done'],
      'done',
    ];
    for (const h of held) {
      const tool = idempotent(async () => ({ content: [], run: ++runs }), { store: { claim: async () => h, complete: async () => {}, release: async () => {} } });
      await assert.rejects(tool({}, extraFor(ctx)), (e) => e.code === 'idempotency_entry_invalid', JSON.stringify(h));
    }
    // Text in Redis that toolctx did not write.
    for (const text of ['not json', '{}', '{"state":"done","hash":"h"}', new Uint8Array([0xff, 0xfe])]) {
      const send = async (args) => (args[0] === 'SET' ? null : text);
      const tool = idempotent(async () => ({ content: [], run: ++runs }), { store: redisIdempotencyStore(send) });
      await assert.rejects(tool({}, extraFor(ctx)), (e) => e.code === 'idempotency_entry_invalid', String(text));
    }
    assert.equal(runs, 0);
  });

  test('a namespace and a key are joined so that two namespaces never share a store key', async () => {
    // The Python package's store_key gives the same (tests/python/test_helpers.py).
    assert.equal(idempotencyStoreKey('', 'task-1:call-1'), ':task-1:call-1');
    assert.equal(idempotencyStoreKey('orders', 'task-1:call-1'), 'orders:task-1:call-1');
    assert.equal(idempotencyStoreKey('a:b', 'c'), 'a%3Ab:c');
    assert.equal(idempotencyStoreKey('a', 'b:c'), 'a:b:c');
    assert.equal(idempotencyStoreKey('100%', 'k'), '100%25:k');
    assert.equal(idempotencyStoreKey('%3A', 'k'), '%253A:k');
    const parts = ['', 'a', 'b', ':', '%', 'a:b', 'b:c', '%3A', 'a%3A', '::'];
    const joined = new Set(parts.flatMap((namespace) => parts.map((key) => idempotencyStoreKey(namespace, key))));
    assert.equal(joined.size, parts.length * parts.length);
    // In one store: namespace "p" with task "t" and no namespace with task
    // "pt" were the same key "pt:c" once, so the second call got the first
    // call's result; now both run.
    const store = memoryIdempotencyStore();
    const ran = [];
    const tool = (namespace) => idempotent(async () => (ran.push(namespace), { content: [] }), { store, namespace });
    const ctxOf = (task) => ({ ...callContext().ctx, task_id: task, tool_call_id: 'c', idempotency_key: `${task}:c` });
    assert.equal((await tool('p')({}, extraFor(ctxOf('t'))))._meta, undefined);
    assert.equal((await tool('')({}, extraFor(ctxOf('pt'))))._meta, undefined);
    assert.equal((await tool('p')({}, extraFor(ctxOf('t'))))._meta['agentarea/replayed'], true);
    assert.deepEqual(ran, ['p', '']);
  });

  test('a replay is the first result as it was sent, its _meta included, whatever became of the object since', async () => {
    const { ctx } = callContext();
    const sent = { content: [{ type: 'text', text: 'hi' }], structuredContent: { n: [1, 2] }, _meta: { 'app/trace': 't-1', nested: { k: null } } };
    const tool = idempotent(async () => sent);
    const legacy = { requestInfo: { headers: { 'mcp-protocol-version': '2025-11-25' } } };
    const first = await tool({}, extraFor(ctx, legacy));
    const wire = JSON.parse(JSON.stringify(first));
    first._meta.nested.k = 'changed after it was sent';
    first.content.push({ type: 'text', text: 'more' });
    const again = await tool({}, extraFor(ctx, legacy));
    assert.deepEqual(again, { ...wire, _meta: { ...wire._meta, 'agentarea/replayed': true } });
  });

  test('a replay is written for the retry\'s protocol revision: SDK v2\'s envelope, else the MCP-Protocol-Version header, else none known', async () => {
    const { ctx } = callContext();
    // A 2026-07-28 answer: stored without its resultType, members in canonical order.
    const tool = idempotent(async () => ({ resultType: 'complete', structuredContent: { b: 1, a: 2 }, content: [] }));
    const at = (revision) => extraFor(ctx, { requestInfo: { headers: { 'mcp-protocol-version': revision } } });
    const v2 = (revision) => ({ mcpReq: { id: 1, envelope: { 'io.modelcontextprotocol/protocolVersion': revision } }, http: { authInfo: extraFor(ctx).authInfo } });
    await tool({}, v2('2026-07-28'));
    const wire = (r) => JSON.stringify(r);
    const stamped = '{"_meta":{"agentarea/replayed":true},"content":[],"resultType":"complete","structuredContent":{"a":2,"b":1}}';
    const unstamped = '{"_meta":{"agentarea/replayed":true},"content":[],"structuredContent":{"a":2,"b":1}}';
    assert.equal(wire(await tool({}, at('2025-11-25'))), unstamped);
    assert.equal(wire(await tool({}, v2('2025-06-18'))), unstamped);
    assert.equal(wire(await tool({}, v2('2026-07-28'))), stamped);
    assert.equal(wire(await tool({}, at('2026-07-28'))), stamped);
    assert.equal(wire(await tool({}, extraFor(ctx))), stamped, 'no revision known: the form every revision accepts');
  });

  test('refuse and onStoreError are the caller\'s to choose', async () => {
    const failing = { claim: async () => null, complete: async () => Promise.reject(new Error('down')), release: async () => undefined };
    const errors = [];
    const tool = idempotent(async () => ({ content: [], ok: true }), { store: failing, onStoreError: (e) => errors.push(e.message) });
    const { ctx } = callContext();
    assert.equal((await tool({}, extraFor(ctx))).ok, true);
    assert.deepEqual(errors, ['down']);
    const conflicted = idempotent(async (args) => ({ content: [], args }), { refuse: (outcome, key) => ({ content: [], outcome, key }) });
    await conflicted({ a: 1 }, extraFor(ctx));
    assert.deepEqual(await conflicted({ a: 2 }, extraFor(ctx)), { content: [], outcome: 'conflict', key: ctx.idempotency_key });
  });
});

describe('progress', () => {
  function recorder({ withToken = true } = {}) {
    const sent = [];
    const extra = {
      _meta: withToken ? { progressToken: 't' } : {},
      signal: new AbortController().signal,
      sendNotification: async (n) => void sent.push(n.params),
    };
    return { sent, extra };
  }

  test('first report at once, then the latest per interval, the final one at once, nothing after it', async () => {
    const clock = fakeClock();
    const { sent, extra } = recorder();
    const report = progress(extra, { clock });
    await report(1, 10);
    await report(2, 10);
    await report(3, 10, 'three');
    assert.deepEqual(sent.map((p) => p.progress), [1]);
    clock.advance(499);
    assert.equal(sent.length, 1);
    clock.advance(1);
    assert.deepEqual(sent.at(-1), { progressToken: 't', progress: 3, total: 10, message: 'three' });
    await report(3, 10); // not increasing: ignored
    await report(2, 10);
    await report(4, 10);
    await report(10, 10); // final: at once, the pending 4 is dropped
    assert.deepEqual(sent.map((p) => p.progress), [1, 3, 10]);
    assert.equal(clock.pending, 0);
    await report(11, 10);
    clock.advance(10_000);
    assert.equal(report.sent, 3);
  });

  test('flush sends a held report; abort drops it; no token means no sends', async () => {
    const clock = fakeClock();
    const abort = new AbortController();
    const { sent, extra } = recorder();
    const report = progress({ ...extra, signal: abort.signal }, { clock });
    await report(1);
    await report(2);
    await report.flush();
    assert.deepEqual(sent.map((p) => p.progress), [1, 2]);
    clock.advance(100);
    await report(3);
    abort.abort();
    clock.advance(10_000);
    assert.deepEqual(sent.map((p) => p.progress), [1, 2]);
    const none = recorder({ withToken: false });
    const silent = progress(none.extra, { clock });
    await silent(1, 1);
    assert.equal(none.sent.length, 0);
  });

  test('SDK v2\'s ctx: the token from ctx.mcpReq._meta, sent with ctx.mcpReq.notify, stopped by ctx.mcpReq.signal', async () => {
    const clock = fakeClock();
    const abort = new AbortController();
    const sent = [];
    const mcpReq = { id: 3, _meta: { progressToken: 'v2' }, signal: abort.signal, notify: async (n) => sent.push(n) };
    const report = progress({ mcpReq, http: {} }, { clock });
    await report(1, 4);
    assert.deepEqual(sent, [{ method: 'notifications/progress', params: { progressToken: 'v2', progress: 1, total: 4 } }]);
    await report(2, 4);
    abort.abort();
    clock.advance(10_000);
    assert.equal(sent.length, 1);
  });

  test('progress refuses what it cannot serve, rather than dropping every report', () => {
    for (const notACall of [undefined, {}, { orderId: 'x' }]) {
      assert.throws(() => progress(notACall), (e) => e.code === 'invalid_argument' && /progress: expected/.test(e.message));
    }
    // A progressToken with no way to send it.
    assert.throws(() => progress({ _meta: { progressToken: 1 }, signal: undefined }), (e) => e.code === 'invalid_argument' && /no sendNotification/.test(e.message));
    assert.throws(() => progress({ mcpReq: { _meta: { progressToken: 1 } } }), (e) => e.code === 'invalid_argument');
  });

  test('a failing send never rejects', async () => {
    const errors = [];
    const report = progress(
      { _meta: { progressToken: 1 }, sendNotification: () => Promise.reject(new Error('closed')) },
      { onError: (e) => errors.push(e.message) },
    );
    await report(1, 1);
    assert.deepEqual(errors, ['closed']);
  });
});

describe('results', () => {
  test('within every limit: no findings', () => {
    assert.deepEqual(checkResult(textResult('x'.repeat(LIMITS.textChars))), []);
    assert.deepEqual(checkResult({ content: [], structuredContent: { s: 'x'.repeat(LIMITS.structuredChars - 8) } }), []);
  });

  test('each limit is reported with its size', () => {
    const codes = (r) => checkResult(r).map((f) => [f.code, f.size, f.index]);
    // Characters are code points: 8001 emoji are 16002 UTF-16 units, still 8001 characters.
    assert.deepEqual(codes({ content: [{ type: 'text', text: '\u{1F600}'.repeat(4000) }, { type: 'text', text: 'x'.repeat(4001) }] }), [
      ['text_offloaded', 8001, undefined],
    ]);
    assert.deepEqual(codes({ content: [], structuredContent: { s: 'x'.repeat(LIMITS.structuredChars) } }), [
      ['structured_dropped', LIMITS.structuredChars + 8, undefined],
    ]);
    const big = Buffer.alloc(LIMITS.imageBytes + 1).toString('base64');
    assert.deepEqual(codes({ content: [{ type: 'image', data: big, mimeType: 'image/png' }] }), [['image_too_large', LIMITS.imageBytes + 1, 0]]);
    assert.deepEqual(codes({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/svg+xml' }] }), [['image_type', 0, 0]]);
    assert.deepEqual(codes({ content: [{ type: 'resource', resource: { uri: 'x:', mimeType: 'image/bmp', blob: 'AAAA' } }] }), [['image_type', 0, 0]]);
    const nine = Array.from({ length: 9 }, () => image(new Uint8Array([1, 2, 3]), 'image/png'));
    assert.deepEqual(codes({ content: nine }), [['too_many_images', 9, undefined]]);
  });

  test('builders call the hook, typed results keep their shape', async () => {
    const findings = [];
    const onLimit = (f) => findings.push(f.code);
    assert.deepEqual(jsonResult({ a: 1 }, { onLimit }), { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } });
    toolResult(['x'.repeat(9000), image(new Uint8Array([0]), 'image/gif')], { onLimit });
    assert.deepEqual(findings, ['text_offloaded']);
    assert.equal(image(new Uint8Array([1, 2, 3]), 'image/png').data, 'AQID');
    const wrapped = withLimits(async () => ({ content: [], structuredContent: { s: 'x'.repeat(20_000) } }), { onLimit });
    await wrapped({}, {});
    assert.deepEqual(findings, ['text_offloaded', 'structured_dropped']);
    assert.deepEqual(errorResult('no'), { content: [{ type: 'text', text: 'no' }], isError: true });
  });
});

describe('cancellable', () => {
  test('timeoutMs aborts the signal with a TimeoutError', async () => {
    const tool = cancellable(
      async (_args, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve(extra.signal.reason.name))),
      { timeoutMs: 5 },
    );
    // AbortSignal.timeout's timer does not hold the event loop open; this one does, as a server would.
    const alive = setInterval(() => undefined, 1000);
    try {
      assert.equal(await tool({}, { signal: new AbortController().signal }), 'TimeoutError');
    } finally {
      clearInterval(alive);
    }
  });

  test('a notification matches only the same request id and token; the registry empties when calls end', async () => {
    const registry = createCancelRegistry();
    const tool = cancellable(
      async (_args, extra) => new Promise((resolve) => {
        extra.signal.addEventListener('abort', () => resolve(extra.signal.reason.message));
      }),
      { registry },
    );
    const headers = { 'x-agentarea-context': 'token-a' };
    const running = tool({}, { requestId: 7, requestInfo: { headers } });
    assert.equal(registry.size, 1);
    const cancel = (requestId, reason) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } });
    assert.equal(noticeCancelled(cancel(7, 'x'), { 'x-agentarea-context': 'token-b' }, registry), false);
    assert.equal(noticeCancelled(cancel('7', 'x'), headers, registry), false);
    assert.equal(noticeCancelled({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers, registry), false);
    assert.equal(noticeCancelled([cancel(7, 'timed out')], new Headers(headers), registry), true);
    assert.equal(await running, 'timed out');
    assert.equal(registry.size, 0);
  });

  test('SDK v2\'s ctx: the id from ctx.mcpReq.id, the token from ctx.http.req; the handler sees the combined signal at ctx.mcpReq.signal', async () => {
    const registry = createCancelRegistry();
    const seen = [];
    const tool = cancellable(
      async (_args, ctx) => {
        seen.push(typeof ctx.mcpReq.notify, ctx.http.req.headers.get('x-agentarea-context'));
        return new Promise((resolve) => ctx.mcpReq.signal.addEventListener('abort', () => resolve(ctx.mcpReq.signal.reason.message)));
      },
      { registry },
    );
    const sdkSignal = new AbortController();
    const req = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'x-agentarea-context': 'token-v2' } });
    const running = tool({}, { mcpReq: { id: 'r1', signal: sdkSignal.signal, notify: async () => undefined }, http: { req } });
    assert.equal(registry.size, 1);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r1', reason: 'stop' } };
    assert.equal(noticeCancelled(cancel, { 'x-agentarea-context': 'token-other' }, registry), false);
    assert.equal(noticeCancelled(cancel, req.headers, registry), true);
    assert.equal(await running, 'stop');
    assert.deepEqual(seen, ['function', 'token-v2']);
    assert.equal(registry.size, 0);
    // The SDK's own signal still reaches the handler.
    const second = tool({}, { mcpReq: { id: 'r2', signal: sdkSignal.signal }, http: { req } });
    sdkSignal.abort(new Error('transport closed'));
    assert.equal(await second, 'transport closed');
  });
});
