// The public API around the core: configuration errors, secrecy, header
// shapes, `now`, the headers-only check. Imports the BUILT package.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { test } from 'node:test';

import { aivaxContextFrom, contextFrom, createVerifier, toolctx, ToolctxError, withToolctx } from 'toolctx';

const SECRET = 'api-test-secret-must-not-leak-0123456789';
const INSTANCE = 'instance-1';
const NOW = 1767225600;

function mint(claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${signed}.${createHmac('sha256', SECRET).update(signed).digest('base64url')}`;
}

const ctx = { protocol: '1', task_id: 't', tool_call_id: 'c', workspace_id: 'w', idempotency_key: 't:c' };
const token = mint({ iss: 'agentarea', aud: INSTANCE, iat: NOW, exp: NOW + 300, ...ctx });
const meta = Object.fromEntries(Object.entries(ctx).map(([k, v]) => [`agentarea/${k}`, v]));
const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'x', _meta: meta } });
const verifier = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });

test('configuration errors carry the core codes and never a secret', () => {
  const cases = [
    [{ instanceId: INSTANCE, secrets: ['short-secret-must-not-leak'] }, 'secret_length'],
    [{ instanceId: INSTANCE, secrets: [] }, 'no_secrets'],
    [{ instanceId: '', secrets: [SECRET] }, 'instance_id_empty'],
    [{ secrets: [SECRET] }, 'config_missing'],
    [{ instanceId: INSTANCE, secrets: [SECRET], clockSkewSeconds: 1.5 }, 'config_type'],
    [{ instanceId: INSTANCE, secrets: [SECRET], clockSkewSeconds: 86400 }, 'limit_out_of_range'],
    [{ instanceId: INSTANCE, secrets: [SECRET], protocolMajors: [] }, 'no_protocol_majors'],
    [{ instanceId: INSTANCE, secrets: [SECRET], credential: { header: 'bad header', values: ['v'] } }, 'credential_header'],
    [{ instanceId: INSTANCE, secrets: [SECRET], credential: { header: 'authorization', values: [] } }, 'credential_no_values'],
    [{ instanceId: INSTANCE, secrets: [SECRET], clock_skew_s: 5 }, 'config_unknown_setting'],
    // A configuration framework's placeholder left unresolved: the core's settings rule.
    [{ instanceId: '${TOOLCTX_INSTANCE_ID}', secrets: [SECRET] }, 'config_placeholder'],
    [{ instanceId: INSTANCE, secrets: ['${TOOLCTX_SECRET}-must-not-leak-0123456789abcdef'] }, 'config_placeholder'],
  ];
  for (const [options, code] of cases) {
    assert.throws(
      () => createVerifier(options),
      (e) => {
        assert.ok(e instanceof ToolctxError, String(e));
        assert.equal(e.code, code, e.message);
        assert.ok(!e.message.includes('must-not-leak'), e.message);
        assert.ok(!inspect(e).includes('must-not-leak'));
        return true;
      },
    );
  }
});

test('a verifier never shows its secrets or credential values', () => {
  const v = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET, `${SECRET}-next`],
    credential: { header: 'authorization', values: ['Bearer cred-must-not-leak'] },
  });
  for (const shown of [String(v), inspect(v), inspect(v, { showHidden: true, depth: 10 }), JSON.stringify({ v }), `${v}`]) {
    assert.ok(!shown.includes('must-not-leak'), shown);
    assert.ok(!shown.includes('cred-must'), shown);
  }
  assert.match(String(v), /instance-1/);
  assert.match(String(v), /2 redacted/);
});

test('every header shape reaches the core, repeats kept', () => {
  const dup = (headers) => verifier.verify({ method: 'POST', headers, body }, { now: NOW });
  const headersObj = new Headers();
  headersObj.append('X-AgentArea-Context', token);
  headersObj.append('X-AgentArea-Context', token);
  for (const headers of [
    [['x-agentarea-context', token], ['X-AgentArea-Context', token]],
    ['x-agentarea-context', token, 'X-AGENTAREA-CONTEXT', token],
    { 'x-agentarea-context': [token, token] },
    { 'x-agentarea-context': `${token}, ${token}` }, // as Node's req.headers joins them
    headersObj,
  ]) {
    const r = dup(headers);
    assert.equal(r.outcome, 'reject');
    assert.equal(r.reason, 'token_duplicated', JSON.stringify(headers));
  }
  for (const headers of [
    [['x-agentarea-context', token]],
    ['X-AgentArea-Context', token],
    { 'x-agentarea-context': token, 'content-length': 12 },
    { 'x-agentarea-context': [token] },
    new Headers({ 'x-agentarea-context': token }),
    [['x-agentarea-context', new TextEncoder().encode(token)]],
    // A Headers look-alike whose get is case-sensitive: walked whole, not asked by name.
    new Map([['X-AgentArea-Context', token]]),
  ]) {
    const r = verifier.verify({ method: 'POST', headers, body: Buffer.from(body) }, { now: NOW });
    assert.equal(r.outcome, 'accept', JSON.stringify(r));
    assert.equal(r.context.task_id, 't');
  }
});

test('header strings are bytes: a raw UTF-8 Mcp-Name as Node hands it over matches', () => {
  const name = 'заказ';
  const b = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, _meta: meta } });
  const asNodeGivesIt = Buffer.from(name, 'utf8').toString('latin1');
  const ok = verifier.verify({ method: 'POST', headers: [['x-agentarea-context', token], ['mcp-name', asNodeGivesIt]], body: b }, { now: NOW });
  assert.equal(ok.outcome, 'accept', JSON.stringify(ok));
  const encoded = `=?base64?${Buffer.from(name).toString('base64')}?=`;
  const ok2 = verifier.verify({ method: 'POST', headers: { 'x-agentarea-context': token, 'mcp-name': encoded }, body: b }, { now: NOW });
  assert.equal(ok2.outcome, 'accept');
  const bad = verifier.verify({ method: 'POST', headers: { 'x-agentarea-context': token, 'mcp-name': 'other' }, body: b }, { now: NOW });
  assert.equal(bad.reason, 'header_mismatch');
});

test('now: defaults to the clock, must be a non-negative integer', () => {
  // The token is from 2026-01-01: with the real clock it is long expired (or not yet valid).
  const r = verifier.verify({ method: 'POST', headers: { 'x-agentarea-context': token }, body });
  assert.equal(r.outcome, 'reject');
  for (const now of [-1, 1.5, NaN, Infinity, '1767225600']) {
    assert.throws(() => verifier.verify({ method: 'POST', body }, { now }), (e) => e.code === 'invalid_argument');
  }
  assert.throws(() => verifier.verify({ method: 'POST', body: 42 }, { now: NOW }), (e) => e.code === 'invalid_argument');
});

test('checkHeaders decides on the credential before the body; includeReason false drops data only', () => {
  const v = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    credential: { header: 'authorization', values: ['Bearer a', 'Bearer b'] },
    includeReason: false,
  });
  assert.deepEqual(v.checkHeaders({ method: 'GET', headers: {} }), { outcome: 'pass', upstream: { remove: [], set: [] } });
  assert.deepEqual(v.checkHeaders({ method: 'POST', headers: { authorization: 'Bearer b' } }), { outcome: 'read_body' });
  const r = v.checkHeaders({ method: 'POST', headers: [['authorization', 'Bearer a'], ['authorization', 'Bearer a']] });
  assert.equal(r.reason, 'credential_invalid');
  assert.equal(r.status, 401);
  assert.equal(r.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"invalid credential"}}');
  assert.equal(v.maxBodyBytes, 1048576);
  v.free();
});

test('includeReason unset or null is the core\'s default (the reason in the body); another type is config_type', () => {
  const request = { method: 'POST', headers: { authorization: 'Bearer x' } };
  const credential = { header: 'authorization', values: ['Bearer a'] };
  for (const includeReason of [undefined, null, true]) {
    const v = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], credential, includeReason });
    assert.match(v.checkHeaders(request).body, /"data":\{"reason":"credential_invalid"\}/, String(includeReason));
    v.free();
  }
  assert.throws(() => createVerifier({ instanceId: INSTANCE, secrets: [SECRET], includeReason: 'no' }), (e) => e.code === 'config_type');
});

test('a freed verifier throws on use and writes nothing into memory it gave back: another verifier still decides as before', () => {
  const request = { method: 'POST', headers: { 'x-agentarea-context': token }, body };
  const a = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });
  const b = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });
  const before = b.verify(request, { now: NOW });
  assert.equal(before.outcome, 'accept');
  assert.equal(a.verify(request, { now: NOW }).outcome, 'accept');
  a.free();
  assert.throws(() => a.verify(request, { now: NOW }));
  assert.throws(() => a.checkHeaders(request));
  assert.deepEqual(b.verify(request, { now: NOW }), before);
  // New objects take memory from the allocator a stray write would have broken.
  for (let i = 0; i < 3; i++) {
    const c = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });
    const checked = c.checkHeaders(request);
    assert.deepEqual(c.verify({ ...request, checked }, { now: NOW }), before);
    c.free();
  }
  b.free();
});

test('checked: a header result lets its own request skip steps 0 and 1, and nothing else', () => {
  const guarded = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    credential: { header: 'authorization', values: ['Bearer a'] },
  });
  const signed = [['authorization', 'Bearer a'], ['x-agentarea-context', token]];
  const unsigned = [['x-agentarea-context', token]];
  const run = (headers, checked) => guarded.verify({ method: 'POST', headers, body, checked }, { now: NOW });
  const head = guarded.checkHeaders({ method: 'POST', headers: signed });
  assert.equal(head.outcome, 'read_body');
  // With other headers, a forged result or another verifier's, every step runs.
  assert.equal(run(unsigned, head).reason, 'credential_missing');
  assert.equal(run(unsigned, { outcome: 'read_body' }).reason, 'credential_missing');
  assert.equal(run(unsigned, verifier.checkHeaders({ method: 'POST', headers: unsigned })).reason, 'credential_missing');
  assert.equal(run(unsigned, guarded.checkHeaders({ method: 'POST', headers: unsigned })).reason, 'credential_missing');
  // Its own request goes on from step 2 on the headers as checked: the
  // credential taken out of the array afterwards is not looked for again.
  const later = guarded.checkHeaders({ method: 'POST', headers: signed });
  signed.splice(0, 1);
  assert.deepEqual(run(signed, head), run([['authorization', 'Bearer a'], ...unsigned]));
  assert.equal(run(signed, head).reason, 'credential_missing', 'a result is used once');
  assert.equal(run(signed, later).outcome, 'accept');
  assert.equal(run(signed).reason, 'credential_missing');
  guarded.free();
});

test('the glue answers u for a ticket it does not hold, and never a verdict', async () => {
  const { Verifier: Glue, wasmMemory } = await import('../dist/wasm/node/toolctx_wasm.js');
  const config = new TextEncoder().encode(JSON.stringify({ instance_id: INSTANCE, secrets: [SECRET] }));
  const glue = new Glue(config, true, undefined, false);
  // The glue's input and answer are in the module's memory (crates/wasm/src/lib.rs).
  const put = (bytes, lens = []) => {
    glue.reserve(bytes.length, lens.length);
    const [, input, lengths] = new Uint32Array(wasmMemory().buffer, glue.answerPtr, 3);
    new Uint8Array(wasmMemory().buffer, input, bytes.length).set(bytes);
    new Uint32Array(wasmMemory().buffer, lengths, lens.length).set(lens);
  };
  const answer = (length) => {
    const at = new Uint32Array(wasmMemory().buffer, glue.answerPtr, 1)[0];
    return new TextDecoder().decode(new Uint8Array(wasmMemory().buffer, at, length));
  };
  const bytes = new TextEncoder().encode(body);
  const verifyBody = (ticket) => {
    put(bytes);
    return answer(glue.verifyBody(ticket, bytes.length, NOW));
  };
  for (const ticket of [0, 1, -1, 0.5, NaN, Infinity, 2 ** 40]) assert.equal(verifyBody(ticket), 'u', String(ticket));
  const tokenHeader = 'x-agentarea-context';
  const heads = new TextEncoder().encode(`POST${tokenHeader}${token}`);
  put(heads, [4, tokenHeader.length, token.length]);
  const out = answer(glue.checkHeaders(heads.length, 3));
  assert.match(out, /^b\d+$/);
  const ticket = Number(out.slice(1));
  assert.equal(verifyBody(ticket)[0], 'A');
  assert.equal(verifyBody(ticket), 'u', 'taken once');
  glue.free();
});

test('the middleware and the fetch wrapper hand the header check on: steps 0 and 1 run once', async () => {
  const { Verifier: Glue } = await import('../dist/wasm/node/toolctx_wasm.js');
  const calls = [];
  const original = { verify: Glue.prototype.verify, verifyBody: Glue.prototype.verifyBody };
  for (const name of Object.keys(original)) {
    Glue.prototype[name] = function (...args) {
      calls.push(name);
      return original[name].apply(this, args);
    };
  }
  try {
    const handler = withToolctx(verifier, () => new Response('ran'), { now: () => NOW });
    const res = await handler(new Request('http://x/', { method: 'POST', headers: { 'x-agentarea-context': token }, body }));
    assert.equal(await res.text(), 'ran');
    const req = Readable.from([Buffer.from(body)]);
    Object.assign(req, { method: 'POST', rawHeaders: ['x-agentarea-context', token] });
    await new Promise((resolve, reject) => toolctx(verifier, { now: () => NOW })(req, { end: () => reject(new Error('refused')) }, (e) => (e ? reject(e) : resolve())));
    assert.equal(req.toolctx.task_id, 't');
  } finally {
    Object.assign(Glue.prototype, original);
  }
  assert.deepEqual(calls, ['verifyBody', 'verifyBody']);
});

test('the middleware refuses a body already parsed into an object', async () => {
  const mw = toolctx(verifier);
  const req = { method: 'POST', rawHeaders: ['x-agentarea-context', token], body: { jsonrpc: '2.0' } };
  const err = await new Promise((resolve) => mw(req, {}, resolve));
  assert.ok(err instanceof ToolctxError);
  assert.equal(err.code, 'body_already_parsed');
  // A stream something else already read to its end.
  const drained = { method: 'POST', rawHeaders: ['x-agentarea-context', token], readableEnded: true };
  const err2 = await new Promise((resolve) => mw(drained, {}, resolve));
  assert.equal(err2.code, 'body_already_parsed');
  // Raw bytes from express.raw() are fine.
  const raw = { method: 'POST', rawHeaders: ['x-agentarea-context', token], body: Buffer.from(body) };
  const mwAt = toolctx(verifier, { now: () => NOW });
  const none = await new Promise((resolve) => mwAt(raw, {}, resolve));
  assert.equal(none, undefined);
  assert.deepEqual(raw.body, JSON.parse(body));
  assert.equal(contextFrom(raw).task_id, 't');
  assert.equal(raw.auth.clientId, 'toolctx');
});

test('contextFrom is undefined without a context', () => {
  assert.equal(contextFrom({ authInfo: undefined, signal: new AbortController().signal }), undefined);
  assert.equal(contextFrom({ authInfo: { token: 'x', clientId: 'y', scopes: [] } }), undefined);
  assert.equal(contextFrom({ authInfo: { extra: { toolctx: 'forged' } } }), undefined);
  // SDK v2's ctx: no http (stdio), no authInfo, a forged value.
  assert.equal(contextFrom({ mcpReq: { id: 1 } }), undefined);
  assert.equal(contextFrom({ mcpReq: { id: 1 }, http: {} }), undefined);
  assert.equal(contextFrom({ mcpReq: { id: 1 }, http: { authInfo: { extra: { toolctx: 'forged' } } } }), undefined);
  assert.equal(contextFrom(new Request('http://127.0.0.1/')), undefined);
});

test('contextFrom reads SDK v2\'s ctx: ctx.http.authInfo, or the Request the fetch wrapper handed on', () => {
  const context = { task_id: 't', idempotency_key: 't:c' };
  assert.equal(contextFrom({ mcpReq: { id: 1 }, http: { authInfo: { extra: { toolctx: context } } } }), context);
  assert.equal(aivaxContextFrom({ mcpReq: { id: 1 }, http: { authInfo: { extra: { aivax: { nonce_verified: true } } } } }).nonce_verified, true);
});

test('contextFrom refuses what is not a call, rather than reading it as "no context"', () => {
  for (const notACall of [undefined, null, {}, { orderId: 'x' }, 'extra', 7]) {
    assert.throws(
      () => contextFrom(notACall),
      (e) => e instanceof ToolctxError && e.code === 'invalid_argument' && /contextFrom: expected the tool handler's second argument/.test(e.message),
      String(notACall),
    );
  }
  assert.throws(() => aivaxContextFrom(undefined), (e) => e.code === 'invalid_argument' && /aivaxContextFrom/.test(e.message));
});
