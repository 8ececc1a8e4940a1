// toolctx/helpers through the real SDK: a stateless Streamable HTTP server on
// 127.0.0.1 (helpers-fixture.mjs) driven by the SDK's real Client with
// hand-minted tokens. Imports the BUILT package (npm/dist).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { CREDENTIAL, callContext, connect, fakeClock, listen, stop } from './support.mjs';
import { helpersServer } from './helpers-fixture.mjs';

/** One call as the platform makes it: its own token (and client), the given context. */
async function call(url, name, args, { ctx, onprogress, overrideMeta } = {}) {
  const c = callContext({ tool: name, ctx, overrideMeta });
  const client = await connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
  try {
    const result = await client.callTool({ name, arguments: args, _meta: c.meta }, undefined, onprogress ? { onprogress } : {});
    return { result, ctx: c.ctx };
  } finally {
    await client.close();
  }
}

const structured = (r) => r.structuredContent;

/** A helpersServer with `options`, listening: `{ server, url }`. */
async function serve(options) {
  const server = helpersServer(options);
  return { server, url: await listen(server.http) };
}

describe('idempotent tools', () => {
  let server;
  let url;
  before(async () => ({ server, url } = await serve()));
  after(() => stop(server.http));

  test('a retry with the same key and arguments is replayed from the store, marked replayed, without running again', async () => {
    const runs = server.seen.runs;
    const first = await call(url, 'charge', { orderId: 'A-1', amount: 10 });
    assert.equal(first.result._meta?.['agentarea/replayed'], undefined, 'a first call is not a replay');
    assert.equal(server.seen.runs, runs + 1);
    // The retry: same context, a newly minted token; the arguments in another member order.
    const retry = await call(url, 'charge', { amount: 10, orderId: 'A-1' }, { ctx: first.ctx });
    assert.equal(retry.result._meta['agentarea/replayed'], true);
    assert.deepEqual(structured(retry.result), structured(first.result));
    assert.deepEqual(retry.result.content, first.result.content);
    assert.equal(server.seen.runs, runs + 1, 'the tool ran again for a retry');
  });

  test('the same key with other arguments is refused as a conflict, never replayed', async () => {
    const first = await call(url, 'charge', { orderId: 'B-1', amount: 10 });
    const runs = server.seen.runs;
    const other = await call(url, 'charge', { orderId: 'B-1', amount: 11 }, { ctx: first.ctx });
    assert.equal(other.result.isError, true);
    assert.equal(other.result._meta['toolctx/idempotency'], 'conflict');
    assert.equal(other.result._meta['agentarea/replayed'], undefined);
    assert.equal(other.result.structuredContent, undefined);
    assert.match(other.result.content[0].text, /conflict/);
    assert.equal(server.seen.runs, runs);
  });

  test('concurrent duplicates run the tool once; the others wait and get its result', async () => {
    const runs = server.seen.runs;
    const { ctx } = callContext({ tool: 'charge' });
    const args = { orderId: 'C-1', amount: 5, delayMs: 200 };
    const results = await Promise.all([1, 2, 3].map(() => call(url, 'charge', args, { ctx })));
    assert.equal(server.seen.runs, runs + 1, 'ran more than once');
    const replayed = results.filter((r) => r.result._meta?.['agentarea/replayed'] === true);
    assert.equal(replayed.length, 2);
    for (const r of results) assert.deepEqual(structured(r.result), structured(results[0].result));
  });

  test('two calls with the same arguments but different keys both run', async () => {
    const a = await call(url, 'charge', { orderId: 'D-1', amount: 1 });
    const b = await call(url, 'charge', { orderId: 'D-1', amount: 1 });
    assert.notEqual(structured(a.result).run, structured(b.result).run);
    assert.equal(b.result._meta?.['agentarea/replayed'], undefined);
  });
});

describe('progress', () => {
  let server;
  let url;
  let clock;
  before(async () => {
    clock = fakeClock();
    ({ server, url } = await serve({ clock }));
  });
  after(() => stop(server.http));

  test('arrives coalesced to one per interval, increasing, with the final progress >= total', async () => {
    const steps = 100;
    const stepMs = 100; // 10 s of the fake clock: at most one send per 500 ms, plus the final one
    const received = [];
    const { result } = await call(url, 'report', { steps, stepMs }, { onprogress: (p) => received.push(p) });
    console.log(`progress: ${steps} reports, ${received.length} notifications: ${received.map((p) => p.progress).join(' ')}`);
    assert.ok(received.length >= 2, `${received.length} notifications`);
    assert.ok(received.length <= 1 + (steps * stepMs) / 500 + 1, `${received.length} notifications`);
    assert.equal(result.content[0].text, `sent ${received.length} of ${steps}`);
    for (let i = 1; i < received.length; i++) assert.ok(received[i].progress > received[i - 1].progress, 'not increasing');
    assert.deepEqual(received.at(-1), { progress: steps, total: steps, message: `step ${steps}` });
    assert.equal(clock.pending, 0, 'a timer outlived the call');
  });

  test('without a progressToken nothing is sent', async () => {
    // JSON leaves the undefined member out: this _meta has no progressToken.
    const { result } = await call(url, 'report', { steps: 5, stepMs: 1000 }, { overrideMeta: { progressToken: undefined } });
    assert.equal(result.content[0].text, 'sent 0 of 5');
  });
});

describe('cancellation', () => {
  let server;
  let url;
  before(async () => ({ server, url } = await serve()));
  after(() => stop(server.http));

  const startedNow = async (label) => {
    while (!server.seen.started.includes(label)) await new Promise((r) => setTimeout(r, 5));
  };
  const cancelledNow = async (label) => {
    for (;;) {
      const c = server.seen.cancelled.find((x) => x.label === label);
      if (c) return c;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  test('a client cancellation (notifications/cancelled in its own POST) fires the tool signal', async () => {
    const c = callContext({ tool: 'slow' });
    const client = await connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
    try {
      const abort = new AbortController();
      const pending = client.callTool({ name: 'slow', arguments: { label: 'cancel-1' }, _meta: c.meta }, undefined, { signal: abort.signal });
      await startedNow('cancel-1');
      abort.abort('the user stopped it');
      await assert.rejects(pending);
      // The client stays connected: only the notification can have fired the signal.
      const seen = await cancelledNow('cancel-1');
      assert.equal(seen.reason.name, 'CancelledError');
      assert.equal(seen.reason.message, 'the user stopped it');
    } finally {
      await client.close();
    }
  });

  test('a client disconnect fires the tool signal (res.on("close") closes the transport)', async () => {
    const c = callContext({ tool: 'slow' });
    const client = await connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
    const pending = client.callTool({ name: 'slow', arguments: { label: 'disconnect-1' }, _meta: c.meta });
    await startedNow('disconnect-1');
    await client.close();
    await assert.rejects(pending);
    const seen = await cancelledNow('disconnect-1');
    assert.ok(seen.reason !== undefined);
  });
});
