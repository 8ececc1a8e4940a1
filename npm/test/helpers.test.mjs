// toolctx/helpers through the real SDK: a stateless Streamable HTTP server
// (helpers-fixture.mjs) in every cell of sdks.mjs (SDK v1 and v2, each
// wiring, the 2025 and 2026-07-28 clients), driven by the cell's real Client
// with hand-minted tokens. Imports the BUILT package (npm/dist).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { CREDENTIAL, callContext, fakeClock } from './support.mjs';
import { helpersApp } from './helpers-fixture.mjs';
import { cells, start } from './sdks.mjs';

const structured = (r) => r.structuredContent;

for (const cell of cells) describe(cell.label, () => {
  /** A client of `server`'s cell with `headers`. */
  const connect = (server, headers) => cell.client.connect(server.url, headers, server.fetchImpl);

  /** One call as the platform makes it: its own token (and client), the given context. */
  async function call(server, name, args, { ctx, onprogress, overrideMeta } = {}) {
    const c = callContext({ tool: name, ctx, overrideMeta });
    const client = await connect(server, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
    try {
      const result = await client.callTool({ name, arguments: args, _meta: c.meta }, onprogress ? { onprogress } : {});
      return { result, ctx: c.ctx };
    } finally {
      await client.close();
    }
  }

  /**
   * The helpers' server in this cell with `options`, started: `start()`'s
   * `{ url, fetchImpl, close }` and what the tools saw (`seen`).
   */
  async function serve(options) {
    const app = helpersApp(cell, options);
    const front = await start(cell, app.spec);
    return { ...front, seen: app.seen };
  }

  describe('idempotent tools', () => {
    let server;
    before(async () => (server = await serve()));
    after(() => server.close());

    test('a retry with the same key and arguments is replayed from the store, marked replayed, without running again', async () => {
      const runs = server.seen.runs;
      const first = await call(server, 'charge', { orderId: 'A-1', amount: 10 });
      assert.equal(first.result._meta?.['agentarea/replayed'], undefined, 'a first call is not a replay');
      assert.equal(server.seen.runs, runs + 1);
      // The retry: same context, a newly minted token; the arguments in another member order.
      const retry = await call(server, 'charge', { amount: 10, orderId: 'A-1' }, { ctx: first.ctx });
      assert.equal(retry.result._meta['agentarea/replayed'], true);
      assert.deepEqual(structured(retry.result), structured(first.result));
      assert.deepEqual(retry.result.content, first.result.content);
      // The first result exactly as it was sent, its own _meta included, the marker added.
      assert.equal(first.result._meta['example.com/receipt'].note, null);
      assert.deepEqual(retry.result, { ...first.result, _meta: { ...first.result._meta, 'agentarea/replayed': true } });
      assert.equal(server.seen.runs, runs + 1, 'the tool ran again for a retry');
    });

    test('the same key with other arguments is refused as a conflict, never replayed', async () => {
      const first = await call(server, 'charge', { orderId: 'B-1', amount: 10 });
      const runs = server.seen.runs;
      const other = await call(server, 'charge', { orderId: 'B-1', amount: 11 }, { ctx: first.ctx });
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
      const results = await Promise.all([1, 2, 3].map(() => call(server, 'charge', args, { ctx })));
      assert.equal(server.seen.runs, runs + 1, 'ran more than once');
      const replayed = results.filter((r) => r.result._meta?.['agentarea/replayed'] === true);
      assert.equal(replayed.length, 2);
      for (const r of results) assert.deepEqual(structured(r.result), structured(results[0].result));
    });

    test('two calls with the same arguments but different keys both run', async () => {
      const a = await call(server, 'charge', { orderId: 'D-1', amount: 1 });
      const b = await call(server, 'charge', { orderId: 'D-1', amount: 1 });
      assert.notEqual(structured(a.result).run, structured(b.result).run);
      assert.equal(b.result._meta?.['agentarea/replayed'], undefined);
    });
  });

  describe('idempotent tools, a call without verified context (requireContext: false)', () => {
    let server;
    before(async () => (server = await serve({ requireContext: false })));
    after(() => server.close());

    /** A call with the credential but no token and no agentarea/* keys: the verifier lets it pass without context. */
    async function unverified(name, args) {
      const client = await connect(server, { authorization: CREDENTIAL });
      try {
        return await client.callTool({ name, arguments: args });
      } finally {
        await client.close();
      }
    }

    test('is refused by default (unverified); the tool does not run', async () => {
      const runs = server.seen.runs;
      const result = await unverified('charge', { orderId: 'U-1', amount: 3 });
      assert.equal(result.isError, true);
      assert.equal(result._meta['toolctx/idempotency'], 'unverified');
      assert.equal(result._meta['agentarea/replayed'], undefined);
      assert.equal(result.structuredContent, undefined);
      assert.match(result.content[0].text, /no verified toolctx context/);
      assert.equal(server.seen.runs, runs, 'the tool ran without context');
    });

    test('runs, unguarded, with allowUnverified: true (each call runs)', async () => {
      const runs = server.seen.runs;
      const first = await unverified('note', { text: 'n' });
      const second = await unverified('note', { text: 'n' });
      assert.equal(first.isError, undefined);
      assert.deepEqual(structured(first), { text: 'n', run: runs + 1 });
      assert.deepEqual(structured(second), { text: 'n', run: runs + 2 });
      assert.equal(second._meta?.['agentarea/replayed'], undefined);
      assert.equal(server.seen.runs, runs + 2);
    });
  });

  // 2026-07-28's multi-round-trip requests: a tool answers input_required,
  // the client fulfils the embedded requests and sends the same tools/call
  // again (same arguments, a fresh request id, the responses in
  // params.inputResponses). Each round is one call of the handler.
  if (cell.client.modern) {
    describe('idempotent tools, a multi-round-trip call (input_required)', () => {
      let server;
      before(async () => (server = await serve()));
      after(() => server.close());

      test('a tool that asks for confirmation completes once confirmed, and runs once; a retry after it is replayed', async () => {
        const runs = server.seen.runs;
        const asked = [];
        const elicit = (params) => {
          asked.push(params.message);
          return { action: 'accept', content: { confirm: true } };
        };
        const c = callContext({ tool: 'confirm_charge' });
        const args = { orderId: 'M-1', amount: 9 };
        const client = await cell.client.connect(server.url, { authorization: CREDENTIAL, 'x-agentarea-context': c.token }, server.fetchImpl, { elicit });
        let result;
        try {
          // The first round's input_required is not stored as the call's
          // result (else every later round got it back, and the client gave
          // up after inputRequired.maxRounds, 10).
          result = await client.callTool({ name: 'confirm_charge', arguments: args, _meta: c.meta });
        } finally {
          await client.close();
        }
        assert.deepEqual(asked, ['charge 9 for M-1?']);
        assert.equal(result.resultType, undefined, 'the call ended input_required');
        assert.deepEqual(structured(result), { ...args, run: runs + 1 });
        assert.equal(result._meta?.['agentarea/replayed'], undefined);
        assert.equal(server.seen.runs, runs + 1);
        // The platform's retry of the finished call (same context, a new token): the stored result.
        const retry = await call(server, 'confirm_charge', args, { ctx: c.ctx });
        assert.equal(retry.result._meta['agentarea/replayed'], true);
        assert.deepEqual(structured(retry.result), structured(result));
        assert.equal(server.seen.runs, runs + 1);
      });
    });
  }

  describe('progress', () => {
    let server;
    let clock;
    before(async () => {
      clock = fakeClock();
      server = await serve({ clock });
    });
    after(() => server.close());

    test('arrives coalesced to one per interval, increasing, with the final progress >= total', async () => {
      const steps = 100;
      const stepMs = 100; // 10 s of the fake clock: at most one send per 500 ms, plus the final one
      const received = [];
      const { result } = await call(server, 'report', { steps, stepMs }, { onprogress: (p) => received.push(p) });
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
      const { result } = await call(server, 'report', { steps: 5, stepMs: 1000 }, { overrideMeta: { progressToken: undefined } });
      assert.equal(result.content[0].text, 'sent 0 of 5');
    });
  });

  describe('cancellation', () => {
    let server;
    before(async () => (server = await serve()));
    after(() => server.close());

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

    // How a cancellation reaches the server is the era's: a 2025 client sends
    // notifications/cancelled in its own POST (noticeCancelled hands it over,
    // with the client's reason); a 2026-07-28 client closes the call's
    // response stream, and the SDK aborts the call's signal with its own reason.
    const byNotification = cell.client.cancelledBy === 'notification';
    const how = byNotification ? 'notifications/cancelled in its own POST' : "the call's response stream closed";
    test(`a client cancellation (${how}) fires the tool signal`, async () => {
      const c = callContext({ tool: 'slow' });
      const client = await connect(server, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
      try {
        const abort = new AbortController();
        const pending = client.callTool({ name: 'slow', arguments: { label: 'cancel-1' }, _meta: c.meta }, { signal: abort.signal });
        await startedNow('cancel-1');
        abort.abort('the user stopped it');
        await assert.rejects(pending);
        // The client stays connected: only the cancellation can have fired the signal.
        const seen = await cancelledNow('cancel-1');
        if (byNotification) {
          assert.equal(seen.reason.name, 'CancelledError');
          assert.equal(seen.reason.message, 'the user stopped it');
        } else {
          assert.ok(seen.reason !== undefined);
          assert.notEqual(seen.reason.name, 'CancelledError', 'a 2026-07-28 client sent notifications/cancelled');
        }
      } finally {
        await client.close();
      }
    });

    test('a client disconnect fires the tool signal (res.on("close") closes the transport)', async () => {
      const c = callContext({ tool: 'slow' });
      const client = await connect(server, { authorization: CREDENTIAL, 'x-agentarea-context': c.token });
      const pending = client.callTool({ name: 'slow', arguments: { label: 'disconnect-1' }, _meta: c.meta });
      await startedNow('disconnect-1');
      await client.close();
      await assert.rejects(pending);
      const seen = await cancelledNow('disconnect-1');
      assert.ok(seen.reason !== undefined);
    });
  });
});
