// The replay guard (CONTRACT §3, token_replayed) through the real SDK client
// and server, in every cell of sdks.mjs (SDK v1 and v2; behind the
// middleware on 127.0.0.1 and behind the fetch wrapper; the 2025 and
// 2026-07-28 clients), with the in-memory store (the core's ReplayCache
// inside the verifier) and with a shared store (asynchronous, as Redis is;
// Redis itself is in replay-redis.test.mjs).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { memoryReplayStore, redisReplayStore, ToolctxError } from 'toolctx';
import { recordingFetch, replayApp, replayVerifier } from './replay-fixture.mjs';
import { cells, start } from './sdks.mjs';
import { CREDENTIAL, INSTANCE, callContext, mint } from './support.mjs';

const REPLAYED = { code: -32001, message: 'context token already used', data: { reason: 'token_replayed' } };

/** A shared store kept in a Map, asynchronous like Redis; `fail` makes it throw. */
function mapStore() {
  const held = new Map();
  const calls = [];
  return {
    held,
    calls,
    fail: false,
    async firstUse(jti, until, now) {
      calls.push({ jti, until, now });
      await new Promise((r) => setImmediate(r));
      if (this.fail) throw new Error('store down');
      if (held.has(jti)) return false;
      held.set(jti, until);
      return true;
    },
  };
}

/**
 * The cell's front end around `verifier`: the middleware on a real port or
 * the fetch wrapper called directly; `inner` sends the client's requests.
 */
async function frontEnd(cell, verifier) {
  const { seen, spec } = replayApp(verifier);
  const front = await start(cell, spec);
  return { url: front.url, seen, inner: front.fetchImpl ?? fetch, close: front.close };
}

const guards = {
  'in memory': () => memoryReplayStore({ capacity: 100 }),
  'a shared store': () => mapStore(),
};

for (const cell of cells) describe(cell.label, () => {
  for (const [guardName, guard] of Object.entries(guards)) {
    describe(`replay guard ${guardName}`, () => {
      let front;
      before(async () => {
        front = await frontEnd(cell, replayVerifier({ replayGuard: guard() }));
      });
      after(() => front.close());

      /** A client whose every request carries `token`; records its tools/call ids. */
      async function client(token) {
        const rec = recordingFetch(front.inner);
        const c = await cell.client.connect(front.url, { authorization: CREDENTIAL, 'x-agentarea-context': token }, rec.fetchImpl);
        return { c, ids: rec.ids };
      }

      test('the same token twice: the second is refused 401 token_replayed with its request id; the tool ran once', async () => {
        const { token, meta } = callContext();
        const runs = front.seen.runs;
        const { c, ids } = await client(token);
        try {
          const first = await c.callTool({ name: 'echo', arguments: { text: 'once' }, _meta: meta });
          assert.deepEqual(first.content, [{ type: 'text', text: 'once' }]);
          const { status, json } = await c.refused({ name: 'echo', arguments: { text: 'twice' }, _meta: meta });
          assert.equal(status, 401);
          assert.equal(ids.length, 2);
          assert.notEqual(ids[0], ids[1]);
          assert.deepEqual(json, { jsonrpc: '2.0', id: ids[1], error: REPLAYED });
        } finally {
          await c.close();
        }
        // From another client too: the token, not the connection, is spent.
        const other = await client(token);
        try {
          const { status, json } = await other.c.refused({ name: 'echo', arguments: { text: 'again' }, _meta: meta });
          assert.equal(status, 401);
          assert.deepEqual(json, { jsonrpc: '2.0', id: other.ids[0], error: REPLAYED });
        } finally {
          await other.c.close();
        }
        assert.equal(front.seen.runs, runs + 1, 'the tool ran for a replayed token');
      });

      test('a retry of the same call with a new token (new jti) runs', async () => {
        const first = callContext();
        const retry = callContext({ ctx: first.ctx });
        assert.equal(retry.ctx.idempotency_key, first.ctx.idempotency_key);
        const runs = front.seen.runs;
        for (const { token, meta } of [first, retry]) {
          const { c } = await client(token);
          try {
            await c.callTool({ name: 'echo', arguments: { text: 'retry' }, _meta: meta });
          } finally {
            await c.close();
          }
        }
        assert.equal(front.seen.runs, runs + 2);
        assert.equal(new Set(front.seen.jtis.slice(-2)).size, 2);
      });

      if (cell.client.modern) {
        test('a multi-round-trip call (input_required) re-sending its token is refused token_replayed at the second round; minting a token per round completes it', async () => {
          const elicit = () => ({ action: 'accept', content: { ok: true } });
          const same = callContext({ tool: 'confirm_echo' });
          const runs = front.seen.runs;
          const rounds = front.seen.rounds ?? 0;
          const c = await cell.client.connect(front.url, { authorization: CREDENTIAL, 'x-agentarea-context': same.token }, front.inner, { elicit });
          try {
            const { status, json } = await c.refused({ name: 'confirm_echo', arguments: { text: 'x' }, _meta: same.meta });
            assert.equal(status, 401);
            assert.equal(json.error.data.reason, 'token_replayed');
          } finally {
            await c.close();
          }
          assert.equal(front.seen.rounds, rounds + 1, 'only the first round reached the tool');
          assert.equal(front.seen.runs, runs, 'the work ran with a replayed token');
          // The platform's way: a new token (same context, new jti) on every request of the call.
          const first = callContext({ tool: 'confirm_echo' });
          const fresh = (url, init) => {
            const headers = new Headers(init?.headers);
            headers.set('x-agentarea-context', callContext({ tool: 'confirm_echo', ctx: first.ctx }).token);
            return front.inner(url, { ...init, headers });
          };
          const d = await cell.client.connect(front.url, { authorization: CREDENTIAL }, fresh, { elicit });
          try {
            const result = await d.callTool({ name: 'confirm_echo', arguments: { text: 'y' }, _meta: first.meta });
            assert.deepEqual(result.content, [{ type: 'text', text: 'y' }]);
          } finally {
            await d.close();
          }
          assert.equal(front.seen.rounds, rounds + 3);
          assert.equal(front.seen.runs, runs + 1);
        });
      }

      test('a token without jti is refused claim_invalid; the tool does not run', async () => {
        const { ctx, meta } = callContext();
        const iat = Math.floor(Date.now() / 1000);
        const token = mint({ iss: 'agentarea', aud: INSTANCE, iat, exp: iat + 300, tool: 'echo', ...ctx });
        const runs = front.seen.runs;
        const { c, ids } = await client(token);
        try {
          const { status, json } = await c.refused({ name: 'echo', arguments: { text: 'x' }, _meta: meta });
          assert.equal(status, 401);
          assert.equal(json.id, ids[0]);
          assert.equal(json.error.data.reason, 'claim_invalid');
        } finally {
          await c.close();
        }
        assert.equal(front.seen.runs, runs);
      });
    });
  }

  test('a shared store that fails refuses 500 internal_error (fail closed); the tool does not run', async () => {
    const store = mapStore();
    store.fail = true;
    const front = await frontEnd(cell, replayVerifier({ replayGuard: store }));
    try {
      const { token, meta } = callContext();
      const rec = recordingFetch(front.inner);
      const c = await cell.client.connect(front.url, { authorization: CREDENTIAL, 'x-agentarea-context': token }, rec.fetchImpl);
      try {
        const { status, json } = await c.refused({ name: 'echo', arguments: { text: 'x' }, _meta: meta });
        assert.equal(status, 500);
        assert.deepEqual(json, {
          jsonrpc: '2.0',
          id: rec.ids[0],
          error: { code: -32603, message: 'request refused: the verifier could not run', data: { reason: 'internal_error' } },
        });
      } finally {
        await c.close();
      }
      assert.equal(front.seen.runs, 0);
      assert.equal(store.calls.length, 1);
    } finally {
      await front.close();
    }
  });
});

/** A tools/call request for `verify`, with the token of `c`. */
function request(c, id = 1) {
  return {
    method: 'POST',
    headers: { 'x-agentarea-context': c.token, authorization: CREDENTIAL, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: c.meta } }),
  };
}

describe('the in-memory store is bounded', () => {
  test('full of live token ids it refuses fresh tokens replay_guard_full (503, not a replay); ids are forgotten once their tokens expired', () => {
    const verifier = replayVerifier({ replayGuard: memoryReplayStore({ capacity: 2 }) });
    const t = Math.floor(Date.now() / 1000);
    const calls = [1, 2, 3].map(() => callContext({ iat: t }));
    assert.equal(verifier.verify(request(calls[0]), { now: t }).outcome, 'accept');
    assert.equal(verifier.verify(request(calls[1]), { now: t }).outcome, 'accept');
    // Two live ids fill it: refusing is the safe side, and it is no replay.
    const full = verifier.verify(request(calls[2], 5), { now: t });
    assert.deepEqual([full.status, full.code, full.reason, full.id], [503, -32603, 'replay_guard_full', 5]);
    assert.equal(verifier.verify(request(calls[0]), { now: t }).reason, 'token_replayed');
    // exp + clockSkewSeconds later the first two are expired: their ids go, new tokens fit.
    const later = t + 300 + 30;
    const fresh = [1, 2].map(() => callContext({ iat: later }));
    assert.equal(verifier.verify(request(fresh[0]), { now: later }).outcome, 'accept');
    assert.equal(verifier.verify(request(fresh[1]), { now: later }).outcome, 'accept');
    assert.equal(verifier.verify(request(fresh[0], 2), { now: later }).reason, 'token_replayed');
    // An old token is refused as expired: forgetting its id lets nothing through.
    assert.equal(verifier.verify(request(calls[0]), { now: later }).reason, 'token_expired');
  });

  test('a refused call spends nothing: a token first sent with a bad _meta still runs once', () => {
    const verifier = replayVerifier({ replayGuard: memoryReplayStore({ capacity: 10 }) });
    const c = callContext();
    const bad = { ...c, meta: { ...c.meta, 'agentarea/task_id': 'someone-else' } };
    assert.equal(verifier.verify(request(bad)).reason, 'meta_mismatch');
    assert.equal(verifier.verify(request(c)).outcome, 'accept');
    assert.equal(verifier.verify(request(c)).reason, 'token_replayed');
  });
});

describe('a shared store through verifyAsync', () => {
  test('verify throws replay_guard_async; verifyAsync claims the jti until exp + clockSkewSeconds', async () => {
    const store = mapStore();
    const verifier = replayVerifier({ replayGuard: store, clockSkewSeconds: 45 });
    assert.equal(verifier.verifiesAsync, true);
    const c = callContext();
    assert.throws(() => verifier.verify(request(c)), (e) => e instanceof ToolctxError && e.code === 'replay_guard_async');
    const now = Math.floor(Date.now() / 1000);
    const accepted = await verifier.verifyAsync(request(c, 'req-1'), { now });
    assert.equal(accepted.outcome, 'accept');
    assert.deepEqual(store.calls, [{ jti: accepted.context.jti, until: accepted.context.exp + 45, now }]);
    const replayed = await verifier.verifyAsync(request(c, 'req-2'), { now });
    assert.deepEqual(
      { ...replayed },
      {
        outcome: 'reject',
        status: 401,
        code: -32001,
        reason: 'token_replayed',
        message: 'context token already used',
        id: 'req-2',
        body: JSON.stringify({ jsonrpc: '2.0', id: 'req-2', error: REPLAYED }),
      },
    );
  });

  test('refusals after the claim are the core\'s, byte for byte: the id as sent, includeReason honoured', async () => {
    const memory = replayVerifier({ replayGuard: memoryReplayStore(), includeReason: false });
    const shared = replayVerifier({ replayGuard: mapStore(), includeReason: false });
    const c = callContext();
    // An id written as 1.50: the core answers with the same text.
    const r = request(c);
    r.body = r.body.replace('"id":1', '"id":1.50');
    assert.equal(memory.verify(r).outcome, 'accept');
    assert.equal((await shared.verifyAsync(r)).outcome, 'accept');
    const fromMemory = memory.verify(r);
    const fromShared = await shared.verifyAsync(r);
    assert.equal(fromShared.body, '{"jsonrpc":"2.0","id":1.50,"error":{"code":-32001,"message":"context token already used"}}');
    assert.deepEqual(fromShared, fromMemory);
  });

  test('a replayed token is refused with exactly the id the request sent: a string, a number, one beyond 2^53, none', async () => {
    const base = callContext().ctx;
    // No id, and metadata holding a member named request_id: the refusal answers null.
    const withMetadata = callContext({ ctx: { ...base, metadata: { a: 1, request_id: 99 } } });
    const cases = [
      ['"req-7"', callContext(), '"req-7"'],
      ['"a\\"b\\u00e9\\n"', callContext(), '"a\\"bé\\n"'],
      ['7', callContext(), '7'],
      ['12345678901234567890', callContext(), '12345678901234567890'],
      ['-1.5e3', callContext(), '-1.5e3'],
      [undefined, withMetadata, 'null'],
    ];
    for (const [idText, c, answered] of cases) {
      const memory = replayVerifier({ replayGuard: memoryReplayStore() });
      const shared = replayVerifier({ replayGuard: mapStore() });
      const r = request(c);
      r.body = r.body.replace('"id":1,', idText === undefined ? '' : `"id":${idText},`);
      assert.equal(memory.verify(r).outcome, 'accept', idText);
      assert.equal((await shared.verifyAsync(r)).outcome, 'accept', idText);
      const fromMemory = memory.verify(r);
      const fromShared = await shared.verifyAsync(r);
      assert.equal(fromShared.reason, 'token_replayed', idText);
      assert.equal(fromShared.body, `{"jsonrpc":"2.0","id":${answered},"error":${JSON.stringify(REPLAYED)}}`, idText);
      assert.deepEqual(fromShared, fromMemory, idText);
    }
  });

  test('the store is not asked about a refused call, nor about one without jti', async () => {
    const store = mapStore();
    const verifier = replayVerifier({ replayGuard: store });
    const c = callContext();
    const bad = { ...c, meta: { ...c.meta, 'agentarea/task_id': 'someone-else' } };
    assert.equal((await verifier.verifyAsync(request(bad))).reason, 'meta_mismatch');
    const iat = Math.floor(Date.now() / 1000);
    const noJti = { ...c, token: mint({ iss: 'agentarea', aud: INSTANCE, iat, exp: iat + 300, tool: 'echo', ...c.ctx }) };
    const refused = await verifier.verifyAsync(request(noJti, 7));
    assert.equal(refused.reason, 'claim_invalid');
    assert.equal(refused.id, 7);
    assert.equal(store.calls.length, 0);
  });

  test('the core decides what each store answer means; anything unknown is a failed store', async () => {
    const answers = [
      [true, 'accept'],
      ['first_use', 'accept'],
      [false, 'token_replayed'],
      ['used', 'token_replayed'],
      ['full', 'replay_guard_full'],
      ['failed', 'internal_error'],
      ['OK', 'internal_error'],
      [1, 'internal_error'],
      [undefined, 'internal_error'],
    ];
    for (const [answer, want] of answers) {
      const verifier = replayVerifier({ replayGuard: { firstUse: async () => answer } });
      const r = await verifier.verifyAsync(request(callContext(), 8));
      assert.equal(r.outcome === 'accept' ? 'accept' : r.reason, want, String(answer));
      if (r.outcome === 'reject') assert.equal(r.id, 8);
    }
  });

  test('many claims in flight at once each settle their own call', async () => {
    const store = mapStore();
    const verifier = replayVerifier({ replayGuard: store });
    const calls = Array.from({ length: 50 }, (_, i) => [callContext(), i]);
    const results = await Promise.all(calls.map(([c, i]) => verifier.verifyAsync(request(c, i))));
    results.forEach((r, i) => {
      assert.equal(r.outcome, 'accept');
      assert.equal(r.context.request_id, i);
      assert.equal(r.context.jti, store.calls[i].jti);
    });
  });

  test('redisReplayStore over a client that fails refuses internal_error', async () => {
    const verifier = replayVerifier({ replayGuard: redisReplayStore(() => Promise.reject(new Error('ECONNREFUSED'))) });
    const refused = await verifier.verifyAsync(request(callContext(), 3));
    assert.equal(refused.status, 500);
    assert.equal(refused.code, -32603);
    assert.equal(refused.reason, 'internal_error');
    assert.equal(refused.id, 3);
  });

  test('redisReplayStore over a Redis that never answers refuses internal_error once timeoutMs is up', async (t) => {
    // The timers are mocked: the refusal comes when timeoutMs is up and not
    // a millisecond before, however fast the machine is.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const silent = () => new Promise(() => {});
    for (const [store, bound] of [
      [redisReplayStore(silent, { timeoutMs: 50 }), 50],
      [redisReplayStore({ sendCommand: silent }, { timeoutMs: 80 }), 80],
    ]) {
      const verifier = replayVerifier({ replayGuard: store });
      let refused;
      const answered = verifier.verifyAsync(request(callContext(), 4)).then((r) => {
        refused = r;
      });
      await turn();
      t.mock.timers.tick(bound - 1);
      await turn();
      assert.equal(refused, undefined, `answered before the ${bound} ms bound`);
      t.mock.timers.tick(1);
      await answered;
      assert.deepEqual([refused.status, refused.reason, refused.id], [500, 'internal_error', 4]);
    }
    t.mock.timers.reset();
    // A send that throws at once is a failed claim too.
    const throwing = redisReplayStore(() => {
      throw new Error('not connected');
    });
    assert.equal((await replayVerifier({ replayGuard: throwing }).verifyAsync(request(callContext()))).reason, 'internal_error');
  });

  test('redisReplayStore refuses a bad timeoutMs or something that is not a client', () => {
    const client = () => Promise.resolve('OK');
    // The core's rule: 0 its default, rounded to whole milliseconds, 1 to 60,000.
    for (const timeoutMs of [undefined, 0, 1, 1.5, 60000]) redisReplayStore(client, { timeoutMs });
    const refused = (e) => e instanceof ToolctxError && e.code === 'limit_out_of_range' && e.message === 'setting `store_timeout_ms` is out of range';
    for (const timeoutMs of [-1, 0.4, 60000.5, 2 ** 31, Number.NaN, Infinity]) {
      assert.throws(() => redisReplayStore(client, { timeoutMs }), refused, String(timeoutMs));
    }
    assert.throws(() => redisReplayStore(client, { timeoutMs: '100' }), (e) => e instanceof ToolctxError && e.code === 'config_type');
    for (const client of [null, {}, { send: () => {} }]) {
      assert.throws(() => redisReplayStore(client), (e) => e instanceof ToolctxError && e.code === 'config_type');
    }
  });

  test('without a guard, or with the memory one, verifyAsync is verify', async () => {
    const verifier = replayVerifier({});
    assert.equal(verifier.verifiesAsync, false);
    const c = callContext();
    assert.equal((await verifier.verifyAsync(request(c))).outcome, 'accept');
    assert.equal((await verifier.verifyAsync(request(c))).outcome, 'accept', 'no guard: a token may be used again');
  });
});

describe('replayGuard configuration', () => {
  test('the capacity is the core\'s to read: 0 its default, 1 to 4294967295 itself', async () => {
    for (const capacity of [0, 1, 4294967295]) {
      assert.equal(replayVerifier({ replayGuard: memoryReplayStore({ capacity }) }).verifiesAsync, false, String(capacity));
    }
    // 0 is a guard, of the core's default size: the second use is refused.
    const verifier = replayVerifier({ replayGuard: memoryReplayStore({ capacity: 0 }) });
    const c = callContext();
    assert.equal((await verifier.verifyAsync(request(c))).outcome, 'accept');
    assert.equal((await verifier.verifyAsync(request(c))).reason, 'token_replayed');
    // Anything else is refused with the core's code and message (a check
    // of the package's own would answer another message).
    for (const capacity of [-1, 1.5, 2 ** 32, Number.NaN, Infinity, Number.MAX_SAFE_INTEGER]) {
      const refused = (e) => e instanceof ToolctxError && e.code === 'limit_out_of_range' && e.message === 'setting `replay_capacity` is out of range';
      assert.throws(() => replayVerifier({ replayGuard: memoryReplayStore({ capacity }) }), refused, String(capacity));
    }
  });

  test('bad settings throw ToolctxError with stable codes', () => {
    const cases = [
      [memoryReplayStore({ capacity: 1.5 }), 'limit_out_of_range'],
      [memoryReplayStore({ capacity: 2 ** 32 }), 'limit_out_of_range'],
      [{ kind: 'memory', capacity: '5' }, 'config_type'],
      [{}, 'config_type'],
      [{ firstUse: 'no' }, 'config_type'],
      ['memory', 'config_type'],
    ];
    for (const [replayGuard, code] of cases) {
      assert.throws(() => replayVerifier({ replayGuard }), (e) => e instanceof ToolctxError && e.code === code, JSON.stringify(replayGuard));
    }
    // Off: null and undefined.
    assert.equal(replayVerifier({ replayGuard: null }).verifiesAsync, false);
    assert.equal(replayVerifier({ replayGuard: memoryReplayStore() }).verifiesAsync, false);
    // Not given: 0, which the core reads as its default (the settings table's `replay_capacity`).
    assert.equal(memoryReplayStore().capacity, 0);
  });
});
