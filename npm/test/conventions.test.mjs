// The neighbouring conventions through the BUILT package: model-facing tool
// names, the Tuix key and headers, the AIVAX verifier (alone, in the Node
// middleware and in the fetch wrapper), and a static bearer (Agenta style)
// refused before the body is read.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';

import { AivaxVerifier, aivaxContextFrom, contextFrom, createVerifier, toolctx, ToolctxError, tuixHeaders, withToolctx, withoutTuixHeaders } from 'toolctx';
import { AivaxVerifier as AivaxVerifierFromSubpath, createAivaxVerifier } from 'toolctx/aivax';
import { canonicalJson, qualifiedToolName, serverLabel, tuixIdempotencyKey } from 'toolctx/conventions';
import { canonicalJson as helpersCanonicalJson } from 'toolctx/helpers';
import { INSTANCE, SECRET, callContext, listen, stop } from './support.mjs';

const vectors = JSON.parse(readFileSync(new URL('../../tests/vectors/conventions/aivax.json', import.meta.url), 'utf8'));
const HOOK_KEY = vectors.config.hook_key;
/** A call with a valid cost-4 nonce and every `_aiv_*` member, from the vectors (hashed by Python's bcrypt). */
const AIVAX_BODY = vectors.cases.find((c) => c.name === 'valid nonce and every field').request.body;
const aivaxMeta = JSON.parse(AIVAX_BODY).params._meta;

const toolsCall = (meta, id = 7) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_weather', arguments: {}, _meta: meta } });

/** Runs `handler` behind `middleware` on 127.0.0.1 and sends one request. */
async function throughMiddleware(middleware, { method = 'POST', headers = {}, body } = {}) {
  let seen;
  const server = createServer((req, res) =>
    middleware(req, res, (err) => {
      seen = { err, req };
      res.end('ok');
    }),
  );
  const url = await listen(server);
  try {
    const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: response.status, text: await response.text(), seen };
  } finally {
    await stop(server);
  }
}

/** A Node request whose body errors as soon as anything reads it. */
function untouchableRequest(headers) {
  const state = { read: false };
  const req = new Readable({
    read() {
      state.read = true;
      this.destroy(new Error('the body was read'));
    },
  });
  req.method = 'POST';
  req.url = '/mcp';
  req.rawHeaders = Object.entries(headers).flat();
  req.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { req, state };
}

/** Just enough of a ServerResponse for a refusal. */
function recordingResponse() {
  const res = { statusCode: 200, headers: {}, body: undefined };
  res.setHeader = (k, v) => (res.headers[k.toLowerCase()] = v);
  res.end = (b) => (res.body = Buffer.from(b).toString('utf8'));
  return res;
}

/** A fetch Request whose body stream errors if it is ever pulled. */
function untouchableFetchRequest(headers) {
  const state = { pulled: false };
  // highWaterMark 0: pulled only when something reads, never to fill a queue.
  const body = new ReadableStream(
    {
      pull() {
        state.pulled = true;
        throw new Error('the body was read');
      },
    },
    { highWaterMark: 0 },
  );
  return { request: new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body, duplex: 'half' }), state };
}

describe('model-facing tool names (computed by the core)', () => {
  test('the contract examples and the 64-character cut', () => {
    assert.equal(qualifiedToolName('My GitHub!', 'create_issue'), 'mcp__my_github___create_issue');
    assert.equal(serverLabel('Constractio — инструменты сметчика'), 'constractio_instrumenty_smetchika');
    assert.equal(serverLabel('工具'), 'server');
    const long = qualifiedToolName('orders', 't'.repeat(80));
    assert.equal(long.length, 64);
    assert.match(long, /^mcp__orders__t+_[0-9a-f]{8}$/);
  });

  test('a lone surrogate or a non-string is refused, not replaced', () => {
    assert.throws(() => qualifiedToolName('a\uD800', 'x'), (e) => e instanceof ToolctxError && e.code === 'invalid_argument');
    assert.throws(() => serverLabel(42), (e) => e instanceof ToolctxError && e.code === 'invalid_argument');
  });
});

describe('Tuix', () => {
  test('the key is SHA-256 of the canonical {arguments, sessionId, tool, turn}; null and "" arguments ignored', () => {
    const canonical = '{"arguments":{"a":1,"b":{"x":2,"y":1}},"sessionId":"s-1","tool":"get","turn":"m-7"}';
    const want = createHash('sha256').update(canonical).digest('hex');
    assert.equal(tuixIdempotencyKey({ sessionId: 's-1', turn: 'm-7', tool: 'get', arguments: { b: { y: 1, x: 2 }, a: 1.0, c: null, d: '' } }), want);
    assert.notEqual(tuixIdempotencyKey({ sessionId: 's-1', turn: 'm-8', tool: 'get', arguments: { a: 1, b: { x: 2, y: 1 } } }), want);
    assert.equal(
      tuixIdempotencyKey({ sessionId: 's', turn: 't', tool: 'x' }),
      createHash('sha256').update('{"arguments":{},"sessionId":"s","tool":"x","turn":"t"}').digest('hex'),
    );
    assert.throws(() => tuixIdempotencyKey({ sessionId: 's', turn: 't', tool: 'x', arguments: { n: NaN } }), TypeError);
    assert.throws(() => tuixIdempotencyKey({ sessionId: 's', turn: 1, tool: 'x' }), (e) => e.code === 'invalid_argument');
  });

  test('withoutTuixHeaders (deprecated) removes every copy and sets what it is given, as given', () => {
    const h = withoutTuixHeaders({ 'X-Session-Id': 'spoofed', 'x-idempotency-key': 'spoofed', accept: '*/*' }, { 'X-Session-Id': 'real' });
    assert.deepEqual([...h], [['accept', '*/*'], ['x-session-id', 'real']]);
    assert.deepEqual(tuixHeaders(JSON.parse(toolsCall({ sessionId: 'not accepted' }))), {}, 'no longer read from _meta');
    assert.deepEqual(tuixHeaders(null), {});
  });

  const plain = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });
  const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], forward: { tuix: true } });
  const spoofed = { 'X-Session-Id': 'spoofed-session', 'X-Idempotency-Key': 'spoofed-key' };

  test('the deprecated tuixHeaders: true needs a verifier with forward: { tuix: true }', () => {
    assert.deepEqual(plain.removedHeaders, []);
    assert.deepEqual(verifier.removedHeaders, ['x-session-id', 'x-idempotency-key']);
    for (const wrap of [() => toolctx(plain, { tuixHeaders: true }), () => withToolctx(plain, () => new Response(), { tuixHeaders: true })]) {
      assert.throws(wrap, (e) => e instanceof ToolctxError && e.code === 'config_invalid' && /forward: \{ tuix: true \}/.test(e.message));
    }
    assert.doesNotThrow(() => toolctx(verifier, { tuixHeaders: true }));
  });

  test('middleware, forward: { tuix: true }: spoofed copies removed, the accepted call\'s _meta values set as the core encoded them', async () => {
    const mw = toolctx(verifier);
    const c = callContext({ tool: 'get_weather' });
    const accepted = await throughMiddleware(mw, {
      headers: { ...spoofed, 'x-agentarea-context': c.token },
      body: toolsCall({ ...c.meta, sessionId: 'sess-9', idempotencyKey: 'key-9' }),
    });
    assert.equal(accepted.status, 200, accepted.text);
    const { req } = accepted.seen;
    assert.equal(contextFrom(req).task_id, c.ctx.task_id);
    assert.equal(req.headers['x-session-id'], 'sess-9');
    assert.equal(req.headers['x-idempotency-key'], 'key-9');
    assert.deepEqual(req.headersDistinct['x-session-id'], ['sess-9']);
    const raw = req.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    assert.equal(raw.filter((n) => n === 'x-session-id').length, 1);
    assert.ok(!req.rawHeaders.includes('spoofed-session') && !req.rawHeaders.includes('spoofed-key'));
    // The deprecated helper answers what the core decided for this body.
    assert.deepEqual(tuixHeaders(req.body), { 'X-Session-Id': 'sess-9', 'X-Idempotency-Key': 'key-9' });

    // Values the core encodes (CONTRACT §7): a space, %, non-ASCII, a number.
    const c3 = callContext({ tool: 'get_weather' });
    const odd = await throughMiddleware(mw, {
      headers: { 'x-agentarea-context': c3.token },
      body: toolsCall({ ...c3.meta, sessionId: 'a b 100% é', idempotencyKey: 5 }),
    });
    assert.equal(odd.status, 200, odd.text);
    assert.equal(odd.seen.req.headers['x-session-id'], 'a%20b%20100%25%20%C3%A9');
    assert.equal(odd.seen.req.headers['x-idempotency-key'], '5');

    // Accepted without the _meta members: the spoofed copies are still gone.
    const c2 = callContext({ tool: 'get_weather' });
    const bare = await throughMiddleware(mw, { headers: { ...spoofed, 'x-agentarea-context': c2.token }, body: toolsCall(c2.meta) });
    assert.equal(bare.status, 200, bare.text);
    assert.equal(bare.seen.req.headers['x-session-id'], undefined);
    assert.equal(bare.seen.req.headers['x-idempotency-key'], undefined);

    // Requests that pass (tools/list, GET) lose them too.
    for (const r of [
      { headers: spoofed, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
      { method: 'GET', headers: spoofed },
    ]) {
      const passed = await throughMiddleware(mw, r);
      assert.equal(passed.status, 200);
      assert.equal(passed.seen.req.headers['x-session-id'], undefined);
      assert.ok(!passed.seen.req.rawHeaders.includes('spoofed-key'));
    }
  });

  test('a verifier that forwards nothing leaves the headers alone', async () => {
    const passed = await throughMiddleware(toolctx(plain), { method: 'GET', headers: spoofed });
    assert.equal(passed.seen.req.headers['x-session-id'], 'spoofed-session');
  });

  test('fetch wrapper, forward: { tuix: true }: the inner Request carries the _meta values, never the spoofed ones', async () => {
    let inner;
    const handler = withToolctx(verifier, (request) => ((inner = request), new Response('ok')));
    const c = callContext({ tool: 'get_weather' });
    const body = toolsCall({ ...c.meta, sessionId: 'sess-9', idempotencyKey: 'key-9' });
    const response = await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...spoofed, 'x-agentarea-context': c.token }, body }));
    assert.equal(response.status, 200);
    assert.equal(inner.headers.get('x-session-id'), 'sess-9');
    assert.equal(inner.headers.get('x-idempotency-key'), 'key-9');
    assert.equal(contextFrom(inner).task_id, c.ctx.task_id);
    assert.equal(await inner.text(), body);

    // A request that passes on its headers keeps its body stream, without the spoofed headers.
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: spoofed, body: list }));
    assert.equal(inner.headers.get('x-session-id'), null);
    assert.equal(inner.headers.get('x-idempotency-key'), null);
    assert.equal(await inner.text(), list);
    await handler(new Request('http://127.0.0.1/mcp', { method: 'GET', headers: spoofed }));
    assert.equal(inner.method, 'GET');
    assert.equal(inner.headers.get('x-session-id'), null);
  });
});

describe('canonical JSON: one implementation', () => {
  test('the package and toolctx/helpers give the core\'s form; what the core refuses is a TypeError', () => {
    const v = { b: [1, 'é', null, 1e21], a: { '\u{1F600}': true, '\uFB01': -0 } };
    assert.equal(canonicalJson(v), '{"a":{"\u{1F600}":true,"\uFB01":0},"b":[1,"é",null,1e+21]}');
    assert.equal(helpersCanonicalJson(v), canonicalJson(v));
    assert.throws(() => canonicalJson({ s: 'a\uDC00' }), TypeError);
    let deep = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    assert.throws(() => canonicalJson(deep), TypeError);
    assert.throws(() => canonicalJson(undefined), TypeError);
    assert.throws(() => canonicalJson({ f() {} }), TypeError);
  });
});

describe('AIVAX verifier', () => {
  const aivax = createAivaxVerifier({ hookKey: HOOK_KEY });

  test('configuration errors carry the core codes and never the hook key', () => {
    const secret = 'hook-key-that-must-not-leak';
    for (const [opts, code] of [
      [{}, 'config_missing'],
      [{ hookKey: '' }, 'config_invalid'],
      [{ hookKey: 'x'.repeat(73) }, 'config_invalid'],
      [{ hookKey: 'a\u0000b' }, 'config_invalid'],
      [{ hookKey: secret, maxBcryptCost: 32 }, 'limit_out_of_range'],
      [{ hookKey: secret, maxBcryptCost: 3 }, 'limit_out_of_range'],
      [{ hookKey: secret, requireNonce: 'yes' }, 'config_type'],
      [{ hookKey: secret, instanceId: 'i' }, 'config_unknown_setting'],
      [{ hookKey: secret, credential: { header: 'authorization', values: [] } }, 'credential_no_values'],
      [{ hookKey: '${AIVAX_HOOK_KEY}' }, 'config_placeholder'],
      [{ hookKey: secret, includeReason: 'no' }, 'config_type'],
    ]) {
      assert.throws(
        () => createAivaxVerifier(opts),
        (e) => e instanceof ToolctxError && e.code === code && !e.message.includes(secret) && !inspect(e).includes(secret),
        code,
      );
    }
    const v = createAivaxVerifier({ hookKey: secret, credential: { header: 'authorization', values: ['Bearer credential-not-shown'] } });
    for (const shown of [String(v), inspect(v), JSON.stringify(v), JSON.stringify({ v })]) {
      assert.ok(!shown.includes(secret) && !shown.includes('credential-not-shown'), shown);
    }
    assert.ok(v instanceof AivaxVerifier);
    assert.equal(v.contextKey, 'aivax');
  });

  test('verify: the typed context, nonce refusals from the core\'s table', () => {
    const r = aivax.verify({ method: 'POST', headers: [['content-type', 'application/json']], body: AIVAX_BODY });
    assert.equal(r.outcome, 'accept');
    assert.deepEqual(r.context, {
      nonce_verified: true,
      external_user_id: 'user-981',
      call_source: 'WebChatClient',
      conversation_token: 'conv-77',
      moment: '2025-09-09T16:58:05.0000000+00:00',
      moment_unix: 1757437085,
      moment_offset_minutes: 0,
      metadata: { tenant_id: 'tenant-3', request_id: 'req-41' },
      request_id: 7,
    });
    const wrong = aivax.verify({ method: 'POST', body: toolsCall({ ...aivaxMeta, _aiv_nonce: HOOK_KEY }) });
    assert.deepEqual(
      { outcome: wrong.outcome, status: wrong.status, code: wrong.code, reason: wrong.reason, id: wrong.id },
      { outcome: 'reject', status: 401, code: -32001, reason: 'nonce_invalid', id: 7 },
    );
    assert.equal(JSON.parse(wrong.body).error.data.reason, 'nonce_invalid');
    assert.equal(aivax.verify({ method: 'POST', body: toolsCall({}) }).reason, 'nonce_missing');
    assert.equal(aivax.verify({ method: 'GET' }).outcome, 'pass');
    assert.equal(aivax.checkHeaders({ method: 'POST', headers: [] }).outcome, 'read_body');
    // Handed on as `checked`, the header result gives the same verdict, once;
    // with other headers the whole request is checked (the credential too).
    const headers = [['content-type', 'application/json']];
    const head = aivax.checkHeaders({ method: 'POST', headers });
    assert.deepEqual(aivax.verify({ method: 'POST', headers, body: AIVAX_BODY, checked: head }), r);
    const guarded = createAivaxVerifier({ hookKey: HOOK_KEY, credential: { header: 'authorization', values: ['Bearer a'] } });
    const signed = [['authorization', 'Bearer a']];
    const guardedHead = guarded.checkHeaders({ method: 'POST', headers: signed });
    assert.equal(guarded.verify({ method: 'POST', headers: [], body: AIVAX_BODY, checked: guardedHead }).reason, 'credential_missing');
    assert.deepEqual(guarded.verify({ method: 'POST', headers: signed, body: AIVAX_BODY, checked: guardedHead }), r);
    assert.equal(guarded.verify({ method: 'POST', headers: [], body: AIVAX_BODY, checked: head }).reason, 'credential_missing');
    const optional = createAivaxVerifier({ hookKey: HOOK_KEY, requireNonce: false, includeReason: false });
    const none = optional.verify({ method: 'POST', body: toolsCall({ tenant_id: 't' }) });
    assert.deepEqual(none, { outcome: 'accept', context: { nonce_verified: false, metadata: { tenant_id: 't' }, request_id: 7 }, upstream: { remove: [], set: [] } });
    const refused = optional.verify({ method: 'POST', body: toolsCall({ _aiv_nonce: 'x' }) });
    assert.equal(JSON.parse(refused.body).error.data, undefined);
  });

  test('toolctx/aivax exports the class the main entry exports; the main entry offers no factory', async () => {
    assert.equal(AivaxVerifierFromSubpath, AivaxVerifier);
    const main = await import('toolctx');
    for (const name of ['createAivaxVerifier', 'qualifiedToolName', 'serverLabel', 'canonicalJson', 'tuixIdempotencyKey']) {
      assert.equal(main[name], undefined, name);
    }
  });

  test('a verified nonce is remembered per verifier: repeats skip bcrypt, failures are not remembered', () => {
    const body = vectors.cases.find((c) => c.name === 'nonce with cost 5 and another salt').request.body;
    const nonce = JSON.parse(body).params._meta._aiv_nonce;
    const timed = (v, b) => {
      const start = process.hrtime.bigint();
      const r = v.verify({ method: 'POST', body: b });
      return { r, ns: Number(process.hrtime.bigint() - start) };
    };
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
    const fresh = () => createAivaxVerifier({ hookKey: HOOK_KEY });
    const v = fresh();
    const first = timed(v, body);
    assert.equal(first.r.outcome, 'accept');
    const repeats = Array.from({ length: 21 }, () => timed(v, body));
    assert.ok(repeats.every(({ r }) => r.outcome === 'accept' && r.context.nonce_verified === true));
    // bcrypt at cost 5 takes milliseconds; a remembered nonce, microseconds.
    const others = Array.from({ length: 5 }, () => timed(fresh(), body).ns);
    assert.ok(median(repeats.map((x) => x.ns)) * 5 < median(others), 'a repeat still ran bcrypt');
    // A changed hash symbol is another nonce: refused, every time.
    const wrong = nonce.slice(0, -1) + (nonce.endsWith('a') ? 'b' : 'a');
    const wrongBody = toolsCall({ ...JSON.parse(body).params._meta, _aiv_nonce: wrong });
    for (let i = 0; i < 3; i++) assert.equal(v.verify({ method: 'POST', body: wrongBody }).reason, 'nonce_invalid');
    // Another account's verifier does not know the nonce.
    assert.equal(createAivaxVerifier({ hookKey: 'another-hook-key' }).verify({ method: 'POST', body }).reason, 'nonce_invalid');
    assert.equal(v.verify({ method: 'POST', body }).outcome, 'accept');
  });

  test('the Node middleware takes it: the context at req.aivax and extra.aivax, refusals as the core wrote them', async () => {
    const mw = toolctx(aivax);
    const ok = await throughMiddleware(mw, { body: AIVAX_BODY });
    assert.equal(ok.status, 200);
    const { req } = ok.seen;
    assert.equal(req.aivax.external_user_id, 'user-981');
    assert.equal(aivaxContextFrom(req).conversation_token, 'conv-77');
    assert.equal(aivaxContextFrom({ authInfo: req.auth }).nonce_verified, true);
    assert.equal(contextFrom(req), undefined, 'no AgentArea context');
    assert.equal(req.toolctx, undefined);
    assert.deepEqual(req.body, JSON.parse(AIVAX_BODY));

    const bad = await throughMiddleware(mw, { body: toolsCall({ ...aivaxMeta, _aiv_nonce: aivaxMeta._aiv_nonce.slice(0, -1) + 'x' }) });
    assert.equal(bad.status, 401);
    assert.equal(bad.seen, undefined);
    assert.equal(JSON.parse(bad.text).error.data.reason, 'nonce_invalid');
  });

  test('the fetch wrapper takes it: aivaxContextFrom(request) and authInfoFrom', async () => {
    let got;
    const handler = withToolctx(aivax, (request) => {
      got = aivaxContextFrom(request);
      return new Response('ok');
    });
    const response = await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', body: AIVAX_BODY }));
    assert.equal(response.status, 200);
    assert.equal(got.call_source, 'WebChatClient');
    const refused = await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', body: toolsCall({}) }));
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.data.reason, 'nonce_missing');
  });
});

describe('static bearer (Agenta style): 401 before the body is read', () => {
  // Only the credential: no token required.
  const bearer = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    requireContext: false,
    credential: { header: 'Authorization', values: ['Bearer token-one', 'Bearer token-two'] },
  });
  const apiKey = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    requireContext: false,
    credential: { header: 'X-API-Key', values: ['key-1'] },
  });
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });

  test('the middleware: every configured token is accepted; a wrong or missing one is refused without reading the body', async () => {
    for (const token of ['Bearer token-one', 'Bearer token-two']) {
      const ok = await throughMiddleware(toolctx(bearer), { headers: { authorization: token }, body: list });
      assert.equal(ok.status, 200, token);
      assert.deepEqual(ok.seen.req.body, JSON.parse(list));
    }
    const key = await throughMiddleware(toolctx(apiKey), { headers: { 'x-api-key': 'key-1' }, body: list });
    assert.equal(key.status, 200);

    for (const [verifier, headers, reason] of [
      [bearer, { Authorization: 'Bearer token-three' }, 'credential_invalid'],
      [bearer, { Authorization: 'bearer token-one' }, 'credential_invalid'],
      [bearer, {}, 'credential_missing'],
      [apiKey, { 'X-API-Key': 'key-2' }, 'credential_invalid'],
      [apiKey, { Authorization: 'key-1' }, 'credential_missing'],
    ]) {
      const { req, state } = untouchableRequest({ 'content-type': 'application/json', ...headers });
      const res = recordingResponse();
      let nextCalled = false;
      toolctx(verifier)(req, res, () => (nextCalled = true));
      await new Promise((r) => setImmediate(r));
      assert.equal(res.statusCode, 401, reason);
      const body = JSON.parse(res.body);
      assert.equal(body.error.data.reason, reason);
      assert.equal(body.id, null);
      assert.equal(nextCalled, false);
      assert.equal(state.read, false, 'the body was read');
      assert.equal(req.readableFlowing, null, 'the body stream was started');
    }
  });

  test('the fetch wrapper: the same, and the refused request\'s body stream is never pulled', async () => {
    const seen = [];
    const handlerFor = (verifier) => withToolctx(verifier, async (request) => (seen.push(await request.text()), new Response('ok')));
    for (const token of ['Bearer token-one', 'Bearer token-two']) {
      const r = await handlerFor(bearer)(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { authorization: token }, body: list }));
      assert.equal(r.status, 200);
    }
    const k = await handlerFor(apiKey)(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'x-api-key': 'key-1' }, body: list }));
    assert.equal(k.status, 200);
    assert.deepEqual(seen, [list, list, list]);

    for (const [verifier, headers, reason] of [
      [bearer, { authorization: 'Bearer token-three' }, 'credential_invalid'],
      [bearer, {}, 'credential_missing'],
      [apiKey, { 'x-api-key': 'nope' }, 'credential_invalid'],
    ]) {
      const { request, state } = untouchableFetchRequest(headers);
      const r = await handlerFor(verifier)(request);
      assert.equal(r.status, 401);
      assert.equal((await r.json()).error.data.reason, reason);
      assert.equal(state.pulled, false, 'the body was read');
      assert.equal(request.bodyUsed, false);
    }
  });

  test('the AIVAX verifier checks the same credential first', async () => {
    const v = createAivaxVerifier({ hookKey: HOOK_KEY, credential: { header: 'Authorization', values: ['Bearer gw-1', 'Bearer gw-2'] } });
    const { request, state } = untouchableFetchRequest({ authorization: 'Bearer gw-3' });
    const r = await withToolctx(v, () => new Response('ok'))(request);
    assert.equal(r.status, 401);
    assert.equal(state.pulled, false);
    const ok = await throughMiddleware(toolctx(v), { headers: { authorization: 'Bearer gw-2' }, body: AIVAX_BODY });
    assert.equal(ok.status, 200);
    assert.equal(ok.seen.req.aivax.nonce_verified, true);
  });
});
