// The replay guard across replicas: a real redis-server (Debian's) on a
// free port of 127.0.0.1, and two server processes (replay-server.mjs)
// whose verifiers share it through redisReplayStore, for each of the
// node:http cells in sdks.mjs's `replicaCells` (SDK v1, and SDK v2 with both
// clients). A token accepted by one process is refused token_replayed by
// the other, and the tool runs once across both. Needs `redis-server` on PATH: scripts/test-npm
// installs it and sets TOOLCTX_REQUIRE_REDIS=1.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createClient } from 'redis';

import { redisReplayStore } from 'toolctx';
import { redisClaimArgs, redisKeyPrefix } from '../dist/wasm/node/toolctx_wasm.js';
import { haveRedis, redisReplicas } from './processes.mjs';
import { recordingFetch, replayVerifier } from './replay-fixture.mjs';
import { replicaCells } from './sdks.mjs';
import { CREDENTIAL, callContext } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const PREFIX = 'toolctx-replay-test:';
const skip = haveRedis ? false : 'redis-server is not on PATH';

const runsOf = async (url) => (await (await fetch(new URL('/runs', url))).json()).runs;

for (const cell of replicaCells) describe(cell.label, { skip }, () => {
  describe('replay guard in Redis shared by two server processes', () => {
    let client;
    let replicas;
    const shared = redisReplicas(join(here, 'replay-server.mjs'), { env: { TOOLCTX_CELL: cell.id } });

    /** One tools/call with `c`'s token from a new client: the result, or the refusal with its request id. */
    async function call(url, c) {
      const rec = recordingFetch();
      const client = await cell.client.connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token }, rec.fetchImpl);
      try {
        const params = { name: 'echo', arguments: { text: 'hi' }, _meta: c.meta };
        const result = await client.callTool(params).catch((e) => e);
        if (!(result instanceof Error)) return { result };
        const refusal = client.refusal(result);
        if (refusal === undefined) throw result;
        return { ...refusal, id: rec.ids[0] };
      } finally {
        await client.close();
      }
    }

    before(async () => {
      ({ client, replicas } = await shared.start());
    });

    after(() => shared.stop());

    test('a token accepted by A is refused token_replayed by B; the tool ran once across both', async () => {
      const [a, b] = replicas;
      const before = [await runsOf(a.url), await runsOf(b.url)];
      const c = callContext();
      const first = await call(a.url, c);
      assert.deepEqual(first.result.content, [{ type: 'text', text: 'hi' }]);
      const again = await call(b.url, c);
      assert.equal(again.status, 401);
      assert.deepEqual(again.json, {
        jsonrpc: '2.0',
        id: again.id,
        error: { code: -32001, message: 'context token already used', data: { reason: 'token_replayed' } },
      });
      // And by A itself.
      assert.equal((await call(a.url, c)).json.error.data.reason, 'token_replayed');
      assert.deepEqual([await runsOf(a.url), await runsOf(b.url)], [before[0] + 1, before[1]]);
      // What Redis holds, read with a plain client: the jti, expiring (exp + 30 s skew at most 330 s away).
      const jti = JSON.parse(Buffer.from(c.token.split('.')[1], 'base64url')).jti;
      assert.equal(await client.get(PREFIX + jti), '1');
      const ttl = await client.pTTL(PREFIX + jti);
      assert.ok(ttl > 0 && ttl <= 330_000, `TTL ${ttl}`);
    });

    test('a retry with a new token runs at the other process', async () => {
      const [a, b] = replicas;
      const runs = (await runsOf(a.url)) + (await runsOf(b.url));
      const first = callContext();
      assert.ok((await call(a.url, first)).result);
      assert.ok((await call(b.url, callContext({ ctx: first.ctx }))).result);
      assert.equal((await runsOf(a.url)) + (await runsOf(b.url)), runs + 2);
    });

    test('the same token at both processes at once: one call runs, the others are refused', async () => {
      const [a, b] = replicas;
      const runs = (await runsOf(a.url)) + (await runsOf(b.url));
      const c = callContext();
      const answers = await Promise.all([a, b, a, b].map((r) => call(r.url, c)));
      assert.equal(answers.filter((x) => x.result).length, 1);
      for (const x of answers.filter((x) => !x.result)) assert.equal(x.json.error.data.reason, 'token_replayed');
      assert.equal((await runsOf(a.url)) + (await runsOf(b.url)), runs + 1);
    });
  });
});

describe('the Redis replay store', { skip }, () => {
  let redisUrl;
  let client;
  const redis = redisReplicas(null, { count: 0 });
  before(async () => ({ redisUrl, client } = await redis.start()));
  after(() => redis.stop());

  test('the store sends the core\'s command (replay::redis::claim_args): what Redis holds is the core\'s key, value and expiry', async () => {
    const sent = [];
    const store = redisReplayStore((args) => (sent.push(args), client.sendCommand(args)));
    const now = Math.floor(Date.now() / 1000);
    const jti = `cmd-${process.pid}-${now}`;
    assert.equal(await store.firstUse(jti, now + 90, now), 'first_use');
    assert.equal(await store.firstUse(jti, now + 90, now), 'used');
    const core = redisClaimArgs(redisKeyPrefix(), jti, now + 90, now);
    assert.deepEqual(core, ['SET', `toolctx:jti:${jti}`, '1', 'NX', 'PX', '90000']);
    assert.deepEqual(sent, [core, core]);
    // What the real Redis received: the key with its value and its expiry.
    assert.equal(await client.get(core[1]), core[2]);
    const pttl = await client.pTTL(core[1]);
    assert.ok(pttl > 85_000 && pttl <= 90_000, `PTTL ${pttl}`);
    // A claim past its token's end still expires (at least a second), as the core says.
    const late = redisClaimArgs('p:', 'x', now - 5, now);
    assert.equal(late[5], '1000');
  });

  test('the store: one SET NX wins; node-redis and a bare function are both accepted; Redis failing refuses', async () => {
    const store = redisReplayStore(client, { prefix: 'toolctx-replay-store:' });
    const now = Math.floor(Date.now() / 1000);
    const answers = await Promise.all(Array.from({ length: 8 }, () => store.firstUse('j1', now + 60, now)));
    assert.equal(answers.filter((x) => x === 'first_use').length, 1);
    assert.equal(answers.filter((x) => x === 'used').length, 7);
    const viaFunction = redisReplayStore((args) => client.sendCommand(args), { prefix: 'toolctx-replay-store:' });
    assert.equal(await viaFunction.firstUse('j1', now + 60, now), 'used');
    assert.equal(await viaFunction.firstUse('j2', now + 60, now), 'first_use');
    // A client whose commands fail: the verifier refuses, 500 internal_error.
    const broken = createClient({ url: redisUrl });
    await broken.connect();
    await broken.quit();
    const verifier = replayVerifier({ replayGuard: redisReplayStore(broken) });
    const c = callContext();
    const r = await verifier.verifyAsync({
      method: 'POST',
      headers: { 'x-agentarea-context': c.token, authorization: CREDENTIAL, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: c.meta } }),
    });
    assert.deepEqual([r.status, r.code, r.reason, r.id], [500, -32603, 'internal_error', 9]);
  });

  test('a reply other than OK or nil is the core\'s failed: refused 500 internal_error, never a first use', async () => {
    const headers = (c) => ({ 'x-agentarea-context': c.token, authorization: CREDENTIAL, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    const body = (c) => JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: c.meta } });
    // Replies the real Redis gives to other commands in the claim's place:
    // an integer (INCR), a bulk string (GET of a held key), a status other than OK (PING).
    await client.set('toolctx-replay-odd:held', 'x');
    const odd = [
      ['integer', (args) => client.sendCommand(['INCR', `toolctx-replay-odd:${args[1]}`])],
      ['bulk', () => client.sendCommand(['GET', 'toolctx-replay-odd:held'])],
      ['status', () => client.sendCommand(['PING'])],
    ];
    for (const [shape, send] of odd) {
      const store = redisReplayStore(send);
      const now = Math.floor(Date.now() / 1000);
      assert.equal(await store.firstUse(`odd-${shape}`, now + 60, now), 'failed', shape);
      const c = callContext();
      const r = await replayVerifier({ replayGuard: store }).verifyAsync({ method: 'POST', headers: headers(c), body: body(c) });
      assert.deepEqual([r.status, r.reason, r.id], [500, 'internal_error', 4], shape);
    }
    // Over its memory limit Redis answers the claim itself with an error (-OOM).
    await client.sendCommand(['CONFIG', 'SET', 'maxmemory', '1']);
    try {
      const c = callContext();
      const r = await replayVerifier({ replayGuard: redisReplayStore(client, { prefix: 'toolctx-replay-oom:' }) }).verifyAsync({ method: 'POST', headers: headers(c), body: body(c) });
      assert.deepEqual([r.status, r.reason], [500, 'internal_error']);
    } finally {
      await client.sendCommand(['CONFIG', 'SET', 'maxmemory', '0']);
    }
  });
});
