// Faults under the Node middleware: a real redis-server (Debian's) on a free
// port of 127.0.0.1 shared by two server processes (faults-server.mjs:
// `redisIdempotencyStore` for the idempotent tool; `redisReplayStore` for the replay
// guard in the first, the in-memory guard in the second, so that a Redis
// failure meets each store), paused (SIGSTOP) and killed in the middle of a run of calls and
// started again on the same port; clients that give up mid-body, trickle
// their body, or stop before their Content-Length; and one retried call sent
// 50 times at once to both processes. Each phase prints its figures as a
// `# ` diagnostic line. Linux only (/proc for open connections).
//
//   node --test npm/test/faults.test.mjs      (scripts/test-hostile-npm)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { freePort, haveRedis, startChild, stopChild } from './processes.mjs';
import { CREDENTIAL, callContext } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const skip = haveRedis ? false : 'redis-server is not on PATH';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const COMMAND_MS = 500;
const LEASE_MS = 3000;
// A call that takes longer than this hangs (a Redis command times out after COMMAND_MS).
const HANG_MS = 6000;

async function startRedis(port) {
  const { child } = await startChild(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'notice'],
    /Ready to accept connections/,
  );
  return child;
}

function pingRedis(port) {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.on('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
    s.on('error', () => resolve(false));
  });
}

/** Open TCP connections whose local end is one of `ports` (/proc/net/tcp, state 01). */
function established(ports) {
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '01' && ports.includes(parseInt(f[1].split(':').pop(), 16))) n += 1;
    }
  }
  return n;
}

async function settledConnections(ports) {
  let n = established(ports);
  for (let i = 0; i < 40 && n > 0; i++) {
    await sleep(50);
    n = established(ports);
  }
  return n;
}

const runsOf = async (url) => (await (await fetch(new URL('/runs', url))).json()).runs;

function body(c, args) {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'charge', arguments: args, _meta: c.meta } });
}

function headersOf(c) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: CREDENTIAL,
    'x-agentarea-context': c.token,
  };
}

/** One JSON-RPC message from a JSON or an SSE answer. */
function messageOf(text) {
  const data = text.startsWith('event:') || text.startsWith('data:')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('')
    : text;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/**
 * One charge call (a retry when `ctx` is given: same context, new token).
 * kind: ran | replayed | refused (toolctx refusal, `reason`) | failed (a
 * tool or JSON-RPC error with a message) | idempotency (`in_progress`,
 * `conflict`) | hung | other.
 */
async function call(url, args, ctx) {
  const c = callContext({ tool: 'charge', ctx });
  const start = Date.now();
  const out = { url, ctx: c.ctx, args, start };
  try {
    const res = await fetch(url, { method: 'POST', headers: headersOf(c), body: body(c, args), signal: AbortSignal.timeout(HANG_MS) });
    const msg = messageOf(await res.text());
    out.status = res.status;
    const result = msg?.result;
    if (msg?.error?.data?.reason) Object.assign(out, { kind: 'refused', reason: msg.error.data.reason });
    else if (msg?.error) Object.assign(out, { kind: 'failed', message: msg.error.message });
    else if (result?._meta?.['toolctx/idempotency']) Object.assign(out, { kind: 'idempotency', reason: result._meta['toolctx/idempotency'] });
    else if (result?.isError) Object.assign(out, { kind: 'failed', message: result.content?.[0]?.text });
    else if (result?._meta?.['agentarea/replayed'] === true) Object.assign(out, { kind: 'replayed', run: result.structuredContent?.run });
    else if (result?.structuredContent) Object.assign(out, { kind: 'ran', run: result.structuredContent.run, pid: result.structuredContent.pid });
    else out.kind = 'other';
  } catch (e) {
    out.kind = e.name === 'TimeoutError' ? 'hung' : 'other';
    out.message = String(e);
  }
  out.end = Date.now();
  return out;
}

/** `fn` over `items`, `width` at a time, results in order. */
async function pool(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

const tally = (xs) => Object.fromEntries([...xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map())].sort());

describe('faults: Redis and clients under the Node middleware', { skip }, () => {
  let redisPort;
  let redis;
  let servers = [];
  let urls = [];
  let ports = [];
  let order = 0;
  const nextOrder = () => `order-${++order}`;
  const totalRuns = async () => (await Promise.all(urls.map(runsOf))).reduce((a, b) => a + b, 0);

  before(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    for (let i = 0; i < 2; i++) {
      const { child, line } = await startChild(process.execPath, [join(here, 'faults-server.mjs')], /^http:\/\//, {
        ...process.env,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        REDIS_COMMAND_MS: String(COMMAND_MS),
        LEASE_MS: String(LEASE_MS),
        REPLAY_STORE: i === 0 ? 'redis' : 'memory',
      });
      servers.push(child);
      urls.push(line.trim());
    }
    ports = urls.map((u) => Number(new URL(u).port));
  });

  after(async () => {
    for (const s of servers) await stopChild(s);
    if (redis) {
      redis.kill('SIGCONT');
      await stopChild(redis);
    }
  });

  /**
   * Calls from `workers` loops for `endMs`, Redis taken down at `downAtMs`
   * and brought back at `upAtMs`; then every call that failed is retried.
   */
  async function outage(name, down, up, { downAtMs = 700, upAtMs = 2200, endMs = 3500, workers = 8 } = {}) {
    const runs0 = await totalRuns();
    const t0 = Date.now();
    const window = {};
    const fault = (async () => {
      await sleep(downAtMs);
      window.down = Date.now();
      await down();
      await sleep(Math.max(0, t0 + upAtMs - Date.now()));
      window.up = Date.now();
      await up();
      // Redis answers again from here (a restarted one has started).
      window.back = Date.now();
    })();
    const calls = [];
    // When a server's client is back: the end of its first call that ran
    // among those sent after Redis answered again (Infinity until then).
    // Every call it is sent after that must run: no margin of time judged.
    const backAt = (url) => Math.min(...calls.filter((c) => c.url === url && c.kind === 'ran' && c.start >= window.back).map((c) => c.end));
    const recoveredOf = (url) => calls.filter((c) => c.url === url && c.start >= backAt(url));
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        // Until endMs, a second after Redis is back, and until each server
        // has been sent calls after its client came back (15 s at the most:
        // a bound on the test's length, not a judgement of speed).
        const more = () =>
          Date.now() - t0 < endMs ||
          window.back === undefined ||
          Date.now() < window.back + 1000 ||
          (urls.some((u) => recoveredOf(u).length < 4) && Date.now() < window.back + 15000);
        for (let i = 0; more(); i++) calls.push(await call(urls[(w + i) % 2], { orderId: nextOrder() }));
      }),
    );
    await fault;
    // Calls wholly inside the outage, and every call sent to a server after its client came back.
    const inside = calls.filter((c) => c.start >= window.down + 50 && c.end <= window.up);
    const recovered = urls.flatMap(recoveredOf);
    const failedFirst = calls.filter((c) => c.kind !== 'ran');
    // Retries of every call that did not run, once the claims a paused Redis
    // may still have written late have expired (LEASE_MS).
    await sleep(Math.max(0, window.up + LEASE_MS + 200 - Date.now()));
    const retries = await pool(failedFirst, 8, (c, i) => call(urls[(i + 1) % 2], c.args, c.ctx));
    const fresh = await Promise.all(Array.from({ length: 10 }, (_, i) => call(urls[i % 2], { orderId: nextOrder() })));
    const runs = (await totalRuns()) - runs0;
    const label = (c) => (c.reason ? `${c.kind} ${c.reason}` : c.kind);
    const figures = {
      calls: calls.length,
      insideOutageByServer: urls.map((u) => tally(inside.filter((c) => c.url === u).map(label))),
      outcomes: tally(calls.map((c) => (c.reason ? `${c.kind} ${c.reason}` : c.kind))),
      insideOutage: inside.length,
      insideOutcomes: tally(inside.map((c) => (c.reason ? `${c.kind} ${c.reason}` : c.kind))),
      failureMessages: tally(calls.filter((c) => c.kind === 'failed').map((c) => String(c.message).slice(0, 60))),
      slowestMs: Math.max(...calls.map((c) => c.end - c.start)),
      retried: retries.length,
      retryOutcomes: tally(retries.map(label)),
      retryFailures: tally(retries.filter((c) => c.kind === 'failed').map((c) => String(c.message).slice(0, 60))),
      freshAfter: tally(fresh.map((c) => c.kind)),
      toolRuns: runs,
    };
    console.log(`# ${name}: ${JSON.stringify(figures)}`);
    return { calls, inside, recovered, retries, fresh, runs };
  }

  function checkOutage({ calls, inside, recovered, retries, fresh, runs }) {
    assert.equal(calls.filter((c) => c.kind === 'hung' || c.kind === 'other').length, 0, 'a call hung or got no JSON-RPC answer');
    assert.ok(inside.length >= 5, `too few calls inside the outage (${inside.length}) to judge it`);
    for (const c of inside) {
      assert.ok(
        (c.kind === 'refused' && c.reason === 'internal_error') || (c.kind === 'failed' && typeof c.message === 'string' && c.message.length > 0),
        `a call while Redis was down was not refused or failed clearly: ${JSON.stringify(c)}`,
      );
    }
    assert.ok(recovered.length > 0 && recovered.every((c) => c.kind === 'ran'), `calls after Redis came back: ${JSON.stringify(tally(recovered.map((c) => c.kind)))}`);
    assert.ok(fresh.every((c) => c.kind === 'ran'), 'fresh calls after the outage did not all run');
    // A retry of a call that did not run runs now (once), or is answered from a result stored meanwhile.
    assert.ok(retries.every((c) => c.kind === 'ran' || c.kind === 'replayed'), `retries: ${JSON.stringify(tally(retries.map((c) => c.kind)))}`);
    // Every run is a call that reported it ran: none hidden, none twice.
    const ran = [...calls, ...retries, ...fresh].filter((c) => c.kind === 'ran');
    assert.equal(runs, ran.length, 'tool runs differ from the calls that ran');
    const keys = ran.map((c) => c.ctx.idempotency_key);
    assert.equal(new Set(keys).size, keys.length, 'an idempotency key ran twice');
  }

  test('Redis paused (SIGSTOP) mid-run and resumed: refused or failed while paused, none unguarded or twice, then calls succeed', async () => {
    const r = await outage('redis paused', async () => redis.kill('SIGSTOP'), async () => redis.kill('SIGCONT'));
    checkOutage(r);
  });

  test('Redis killed mid-run and started again on the same port: refused or failed while down, then calls succeed without a restart', async () => {
    const r = await outage(
      'redis killed',
      async () => {
        const exited = new Promise((res) => redis.once('exit', res));
        redis.kill('SIGKILL');
        await exited;
      },
      async () => {
        redis = await startRedis(redisPort);
      },
    );
    checkOutage(r);
  });

  test('the same retried call sent 50 times at once to two processes sharing Redis runs the tool once', async () => {
    const runs0 = await totalRuns();
    const { ctx } = callContext({ tool: 'charge' });
    const args = { orderId: nextOrder(), delayMs: 300 };
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => call(urls[i % 2], args, ctx)));
    const runs = (await totalRuns()) - runs0;
    console.log(`# 50 at once: ${JSON.stringify({ outcomes: tally(results.map((c) => c.kind)), toolRuns: runs })}`);
    assert.equal(runs, 1, 'the tool ran more than once');
    assert.equal(results.filter((c) => c.kind === 'ran').length, 1);
    assert.equal(results.filter((c) => c.kind === 'replayed').length, 49);
    const first = results.find((c) => c.kind === 'ran');
    assert.ok(results.every((c) => c.run === first.run), 'a replay carries another result');
  });

  test('clients that disconnect mid-body, trickle the body, or stop before Content-Length: no hang, no leak, the tool never runs', async () => {
    const runs0 = await totalRuns();
    const port = ports[0];
    const kinds = { fin: 0, rst: 0, short: 0, trickleGone: 0 };
    const abandon = (kind) =>
      new Promise((resolve) => {
        const c = callContext({ tool: 'charge' });
        const payload = Buffer.from(body(c, { orderId: nextOrder() }));
        const head = [
          'POST /mcp HTTP/1.1',
          `host: 127.0.0.1:${port}`,
          ...Object.entries(headersOf(c)).map(([k, v]) => `${k}: ${v}`),
          `content-length: ${payload.length + (kind === 'short' ? 100 : 0)}`,
          '',
          '',
        ].join('\r\n');
        const s = tcpConnect(port, '127.0.0.1');
        let answered = '';
        s.on('data', (d) => (answered += d));
        s.on('error', () => undefined);
        s.on('close', () => resolve(answered));
        s.on('connect', async () => {
          s.write(head);
          if (kind === 'short') {
            s.write(payload); // all of it, but 100 bytes fewer than announced
            await sleep(300);
            s.end();
          } else if (kind === 'trickleGone') {
            for (let i = 0; i < 40; i++) {
              s.write(payload.subarray(i, i + 1));
              await sleep(10);
            }
            s.destroy();
          } else {
            s.write(payload.subarray(0, payload.length >> 1));
            await sleep(20);
            if (kind === 'rst') s.resetAndDestroy();
            else s.end();
          }
        });
      });
    const list = Array.from({ length: 120 }, (_, i) => ['fin', 'rst', 'short', 'trickleGone'][i % 4]);
    const answeredAny = [];
    for (let i = 0; i < list.length; i += 20) {
      const batch = list.slice(i, i + 20);
      const got = await Promise.all(batch.map(abandon));
      batch.forEach((k, j) => {
        kinds[k] += 1;
        if (got[j]) answeredAny.push(`${k}: ${got[j].split('\r\n')[0]} ${got[j].split('\r\n\r\n')[1]?.slice(0, 120) ?? ''}`);
      });
    }
    // A body trickled one byte at a time to its end gets its answer.
    const c = callContext({ tool: 'charge' });
    const payload = Buffer.from(body(c, { orderId: nextOrder() }));
    const trickled = await new Promise((resolve, reject) => {
      const head = ['POST /mcp HTTP/1.1', `host: 127.0.0.1:${port}`, ...Object.entries(headersOf(c)).map(([k, v]) => `${k}: ${v}`), `content-length: ${payload.length}`, 'connection: close', '', ''].join('\r\n');
      const s = tcpConnect(port, '127.0.0.1');
      let reply = '';
      s.on('data', (d) => (reply += d));
      s.on('error', reject);
      s.on('close', () => resolve(reply));
      s.on('connect', async () => {
        s.write(head);
        for (let i = 0; i < payload.length; i++) {
          s.write(payload.subarray(i, i + 1));
          await sleep(2);
        }
      });
    });
    const open = await settledConnections(ports);
    const runs = (await totalRuns()) - runs0;
    const after = await call(urls[0], { orderId: nextOrder() });
    console.log(`# abandoned bodies: ${JSON.stringify({ kinds, answered: tally(answeredAny), trickledBytes: payload.length, trickledAnswer: trickled.split('\r\n')[0], openConnectionsAfter: open, toolRuns: runs, nextCallMs: after.end - after.start })}`);
    assert.equal(open, 0, 'connections left open on the servers');
    assert.match(trickled, /^HTTP\/1\.1 200/, 'the trickled call got no answer');
    assert.match(trickled, /"run":\d+/, 'the trickled call did not run');
    assert.equal(runs, 1, 'the tool ran for an abandoned body (only the trickled call may run)');
    // Node's parser answers a body cut short by the client's FIN itself (a bare 400, no JSON-RPC): never the tool's answer.
    assert.deepEqual(answeredAny.filter((a) => !/^(fin|short): HTTP\/1\.1 400 Bad Request $/.test(a)), [], 'an abandoned request was answered by the server');
    assert.equal(after.kind, 'ran', 'the server does not answer after the abandoned bodies');
    assert.ok(after.end - after.start < 2000, 'the next call was slow');
  });
});
