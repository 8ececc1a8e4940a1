// Idempotency across replicas: a real redis-server (Debian's) on a free port
// of 127.0.0.1, and two server processes (helpers-server.mjs) sharing it,
// for each of the node:http cells in sdks.mjs's `replicaCells` (SDK v1, and
// SDK v2 with both clients). A retry sent to the second process is answered
// from the first one's result, and the tool runs once across both. Needs
// `redis-server` on PATH:
// scripts/test-npm installs it and sets TOOLCTX_REQUIRE_REDIS=1, so that
// there a missing server fails the run instead of skipping these tests.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { idempotencyStoreKey, redisIdempotencyStore } from 'toolctx/helpers';
import { haveRedis, redisReplicas } from './processes.mjs';
import { replicaCells } from './sdks.mjs';
import { CREDENTIAL, callContext } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const skip = haveRedis ? false : 'redis-server is not on PATH';

const runsOf = async (url) => (await (await fetch(new URL('/runs', url))).json()).runs;

for (const cell of replicaCells) describe(cell.label, { skip }, () => {
  describe('Redis store shared by two server processes', () => {
    let client;
    let replicas;
    const shared = redisReplicas(join(here, 'helpers-server.mjs'), { env: { TOOLCTX_CELL: cell.id } });

    async function call(url, name, args, ctx) {
      const c = callContext({ tool: name, ctx });
      const client = await cell.client.connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
      try {
        return { result: await client.callTool({ name, arguments: args, _meta: c.meta }), ctx: c.ctx };
      } finally {
        await client.close();
      }
    }

    before(async () => {
      ({ client, replicas } = await shared.start());
    });

    after(() => shared.stop());

    test('a retry at the second process is answered from the first one\'s result; the tool ran once across both', async () => {
      const [a, b] = replicas;
      const before = [await runsOf(a.url), await runsOf(b.url)];
      const first = await call(a.url, 'charge', { orderId: 'R-1', amount: 42 });
      assert.equal(first.result._meta?.['agentarea/replayed'], undefined);
      const retry = await call(b.url, 'charge', { orderId: 'R-1', amount: 42 }, first.ctx);
      assert.equal(retry.result._meta['agentarea/replayed'], true);
      assert.deepEqual(retry.result.structuredContent, first.result.structuredContent);
      assert.equal(retry.result.structuredContent.chargedBy, a.child.pid, 'the result is the first process\'s');
      assert.deepEqual([await runsOf(a.url), await runsOf(b.url)], [before[0] + 1, before[1]]);
      // What the store holds, read with a plain client.
      const key = `toolctx-test:${idempotencyStoreKey('', first.ctx.idempotency_key)}`;
      const stored = JSON.parse(await client.get(key));
      assert.equal(stored.state, 'done');
      assert.match(stored.hash, /^[0-9a-f]{64}$/);
      assert.ok((await client.pTTL(key)) > 0, 'the result has no TTL');
    });

    test('concurrent duplicates at both processes run the tool once', async () => {
      const [a, b] = replicas;
      const before = (await runsOf(a.url)) + (await runsOf(b.url));
      const { ctx } = callContext({ tool: 'charge' });
      const args = { orderId: 'R-2', amount: 7, delayMs: 300 };
      const results = await Promise.all([a, b, a, b].map((r) => call(r.url, 'charge', args, ctx)));
      assert.equal((await runsOf(a.url)) + (await runsOf(b.url)), before + 1, 'ran more than once across the replicas');
      assert.equal(results.filter((r) => r.result._meta?.['agentarea/replayed'] === true).length, 3);
      for (const r of results) assert.deepEqual(r.result.structuredContent, results[0].result.structuredContent);
    });

    test('conflicting arguments at the other process are refused', async () => {
      const [a, b] = replicas;
      const first = await call(a.url, 'charge', { orderId: 'R-3', amount: 1 });
      const runs = (await runsOf(a.url)) + (await runsOf(b.url));
      const other = await call(b.url, 'charge', { orderId: 'R-3', amount: 2 }, first.ctx);
      assert.equal(other.result.isError, true);
      assert.equal(other.result._meta['toolctx/idempotency'], 'conflict');
      assert.equal((await runsOf(a.url)) + (await runsOf(b.url)), runs);
    });
  });
});

describe('the Redis store', { skip }, () => {
  let client;
  const redis = redisReplicas(null, { count: 0 });
  before(async () => ({ client } = await redis.start()));
  after(() => redis.stop());

  test('the store: one claim wins among concurrent ones, release deletes only its own claim', async () => {
    const store = redisIdempotencyStore(client, { prefix: 'toolctx-store-test:' });
    const claims = Array.from({ length: 8 }, (_, i) => ({ state: 'running', hash: 'h', owner: `o${i}` }));
    const answers = await Promise.all(claims.map((c) => store.claim('k1', c, 60_000)));
    const winners = answers.map((a, i) => (a === null ? i : -1)).filter((i) => i >= 0);
    assert.equal(winners.length, 1);
    const winner = claims[winners[0]];
    for (const a of answers) if (a !== null) assert.deepEqual(a, winner);
    await store.release('k1', claims[(winners[0] + 1) % claims.length]); // not the holder: no effect
    assert.equal(JSON.parse(await client.get('toolctx-store-test:k1')).owner, winner.owner);
    await store.release('k1', winner);
    assert.equal(await client.get('toolctx-store-test:k1'), null);
    // node-redis's own `sendCommand` and a bare function are both accepted.
    const viaFunction = redisIdempotencyStore((args) => client.sendCommand(args), { prefix: 'toolctx-store-test:' });
    assert.equal(await viaFunction.claim('k2', winner, 60_000), null);
    assert.deepEqual(await viaFunction.claim('k2', claims[0], 60_000), winner);
  });
});
