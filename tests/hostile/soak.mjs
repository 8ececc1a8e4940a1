// Soak: the Node middleware at saturation for a bounded time, watching the
// server's memory. By hand, not in scripts/test:
//
//   node tests/hostile/soak.mjs [SECONDS]      (default 300)
//   scripts/test-hostile-npm soak [SECONDS]    (installs autocannon, builds what is missing)
//
// autocannon (npm, pinned in tests/hostile/package.json) drives 127.0.0.1
// over keep-alive connections with a rotation of ten requests: four new
// tools/call each with a fresh token and idempotency key (the tool runs),
// one retry of the same call with a fresh token (answered from the
// idempotency store), two that pass (tools/list, ping) and three that must
// be refused (a token signed with another key, `_meta` not matching the
// token, a body that is not JSON). Tokens are minted per request with
// node:crypto (npm/test/support.mjs), never with toolctx, each expiring
// 20 s later. The server
// (npm/test/soak-server.mjs) has the in-memory replay guard and the
// idempotency LRU sized so that saturation fills both within the warm-up:
// from then on the replay guard refuses a new token whenever all its ids are
// live (token_replayed, counted apart: its bound at work) and takes new ones
// as the oldest expire.
//
// Every 5 s: requests/s, the server's RSS and heap (process.memoryUsage over
// IPC), the tool's runs and the idempotency store's size. Checks: no socket
// error or timeout, every answer's status is one intended for its request,
// and the RSS after the warm-up stays within 10% (max over min). Prints the
// figures and closes with `N passed, N failed`. Load figures from a shared
// machine are indicative only.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { CREDENTIAL, callContext, mint } from '../../npm/test/support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.argv[2] ?? 300);
const SAMPLE_S = 5;
const WARMUP_S = Math.min(60, Math.floor(seconds / 3));
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 32);
const REPLAY_CAPACITY = Number(process.env.SOAK_REPLAY_CAPACITY ?? 20000);
const IDEM_ENTRIES = Number(process.env.SOAK_IDEM_ENTRIES ?? 10000);

const results = [];
function check(name, ok, detail = '') {
  results.push(Boolean(ok));
  console.log(ok ? `ok - ${name}` : `FAIL - ${name}: ${JSON.stringify(detail).slice(0, 2000)}`);
}

const server = fork(join(here, '..', '..', 'npm', 'test', 'soak-server.mjs'), [], {
  env: { ...process.env, SOAK_REPLAY_CAPACITY: String(REPLAY_CAPACITY), SOAK_IDEM_ENTRIES: String(IDEM_ENTRIES) },
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
});
const stopServer = () => {
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
};
process.on('exit', stopServer);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
const url = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.once('line', (l) => resolve(l.trim()));
  server.once('exit', (code) => reject(new Error(`soak server exited (${code}) before listening`)));
});

const memory = () =>
  new Promise((resolve) => {
    server.once('message', resolve);
    server.send('memory');
  });

// ------------------------------------------------------------ the rotation
const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: CREDENTIAL };
const callBody = (c, args, id) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'charge', arguments: args, _meta: c.meta } });
let n = 0;
// Tokens that expire 20 s from now (issued 280 s ago, within the age
// limit): their ids leave the full replay guard again, so the run keeps
// accepting calls at the guard's bound instead of refusing all after it fills.
const iat = () => Math.floor(Date.now() / 1000) - 280;
const retried = callContext({ tool: 'charge' }).ctx;
const kinds = {
  // The tool runs: a new call, its own token and key.
  call: () => {
    const c = callContext({ tool: 'charge', iat: iat() });
    return { headers: { ...base, 'x-agentarea-context': c.token }, body: callBody(c, { orderId: `o-${++n}` }, n) };
  },
  // A retry: same context and arguments, fresh token: the stored result.
  retry: () => {
    const c = callContext({ tool: 'charge', ctx: retried, iat: iat() });
    return { headers: { ...base, 'x-agentarea-context': c.token }, body: callBody(c, { orderId: 'retried' }, ++n) };
  },
  list: () => ({ headers: base, body: JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'tools/list' }) }),
  ping: () => ({ headers: base, body: JSON.stringify({ jsonrpc: '2.0', id: ++n, method: 'ping' }) }),
  wrongKey: () => {
    const c = callContext({ tool: 'charge' });
    const claims = JSON.parse(Buffer.from(c.token.split('.')[1], 'base64url'));
    const token = mint(claims, 'another-secret-0123456789-abcdefghijklmnop');
    return { headers: { ...base, 'x-agentarea-context': token }, body: callBody(c, { orderId: 'x' }, ++n) };
  },
  metaMismatch: () => {
    const c = callContext({ tool: 'charge', overrideMeta: { 'agentarea/task_id': 'someone-else' } });
    return { headers: { ...base, 'x-agentarea-context': c.token }, body: callBody(c, { orderId: 'x' }, ++n) };
  },
  notJson: () => ({ headers: { ...base, 'x-agentarea-context': callContext({ tool: 'charge' }).token }, body: '{"jsonrpc":"2.0",' }),
};
// What each must get: status, and for a refusal its reason.
const intended = {
  call: [200, 'ran'],
  retry: [200, 'replayed'],
  list: [200, 'pass'],
  ping: [200, 'pass'],
  wrongKey: [401, 'signature_invalid'],
  metaMismatch: [403, 'meta_mismatch'],
  notJson: [400, 'parse_error'],
};
const rotation = ['call', 'list', 'wrongKey', 'call', 'retry', 'metaMismatch', 'call', 'ping', 'notJson', 'call'];
const tally = {};
function outcome(kind, status, body) {
  const reason = /"reason":"([a-z_]+)"/.exec(body ?? '')?.[1];
  let what = reason ?? (status === 200 ? 'ok' : 'other');
  if (status === 200 && (kind === 'call' || kind === 'retry')) what = /agentarea\/replayed/.test(body) ? 'replayed' : /"run":\d+/.test(body) ? 'ran' : 'other';
  if (status === 200 && (kind === 'list' || kind === 'ping')) what = /"result"/.test(body) ? 'pass' : 'other';
  const key = `${kind} ${status} ${what}`;
  tally[key] = (tally[key] ?? 0) + 1;
}
const requests = rotation.map((kind) => ({
  method: 'POST',
  path: new URL(url).pathname,
  setupRequest: (req) => ({ ...req, ...kinds[kind]() }),
  onResponse: (status, body) => outcome(kind, status, body),
}));

// ---------------------------------------------------------------- the run
console.log(`soak: ${seconds} s at saturation, ${CONNECTIONS} keep-alive connections, against ${url} (pid ${server.pid}); replay guard ${REPLAY_CAPACITY} ids, idempotency LRU ${IDEM_ENTRIES} entries`);
const samples = [];
const t0 = Date.now();
let window = 0;
const instance = autocannon({ url, connections: CONNECTIONS, duration: seconds, requests, timeout: 10 });
instance.on('tick', ({ counter }) => (window += counter));
const sampler = setInterval(async () => {
  const m = await memory();
  const s = {
    t: Math.round((Date.now() - t0) / 1000),
    rps: Math.round(window / SAMPLE_S),
    rssMiB: +(m.memory.rss / 2 ** 20).toFixed(1),
    heapUsedMiB: +(m.memory.heapUsed / 2 ** 20).toFixed(1),
    heapTotalMiB: +(m.memory.heapTotal / 2 ** 20).toFixed(1),
    runs: m.runs,
    idempotencyEntries: m.idempotencyEntries,
  };
  window = 0;
  samples.push(s);
  console.log(`  t=${s.t}s ${s.rps} req/s rss ${s.rssMiB} MiB heap ${s.heapUsedMiB}/${s.heapTotalMiB} MiB runs ${s.runs} idempotency entries ${s.idempotencyEntries}`);
}, SAMPLE_S * 1000);
const [result] = await once(instance, 'done');
clearInterval(sampler);

// -------------------------------------------------------------- the checks
const alive = server.exitCode === null && server.signalCode === null;
check(`server up throughout (pid ${server.pid})`, alive);
check('no socket error or timeout', result.errors === 0 && result.timeouts === 0, { errors: result.errors, timeouts: result.timeouts });
const unintended = Object.entries(tally).filter(([key]) => {
  const [kind, status, what] = key.split(' ');
  const [s, w] = intended[kind];
  // At its bound the replay guard refuses a new token: that is its capacity at work, counted apart.
  const bound = (kind === 'call' || kind === 'retry') && status === '401' && what === 'token_replayed';
  return !bound && !(Number(status) === s && (w === what || (kind === 'retry' && what === 'ran')));
});
check('every answer is the one intended for its request (or token_replayed from the full replay guard)', unintended.length === 0, unintended);
const after = samples.filter((s) => s.t > WARMUP_S);
const rss = after.map((s) => s.rssMiB);
const flat = rss.length >= 2 && Math.max(...rss) <= 1.1 * Math.min(...rss);
check(`RSS after the ${WARMUP_S} s warm-up within 10% (${Math.min(...rss)}-${Math.max(...rss)} MiB over ${rss.length} samples)`, flat, rss);
const final = samples.at(-1);
check(`the idempotency store stays at its bound (${final?.idempotencyEntries} <= ${IDEM_ENTRIES})`, final && final.idempotencyEntries <= IDEM_ENTRIES, final);

const lat = result.latency;
console.log(`\nsoak figures: ${result.requests.total} requests in ${seconds} s, ${Math.round(result.requests.average)} req/s average; latency p50 ${lat.p50} ms, p97.5 ${lat.p97_5} ms, p99 ${lat.p99} ms, max ${lat.max} ms`);
console.log(`answers per request kind, status and outcome: ${JSON.stringify(tally)}`);
const heap = after.map((s) => s.heapUsedMiB);
console.log(`after the warm-up: RSS ${Math.min(...rss)}-${Math.max(...rss)} MiB, heap used ${Math.min(...heap)}-${Math.max(...heap)} MiB`);
console.log(`RSS curve (MiB, every ${SAMPLE_S} s): ${samples.map((s) => s.rssMiB).join(' ')}`);
console.log(`heap used curve (MiB): ${samples.map((s) => s.heapUsedMiB).join(' ')}`);
console.log(`req/s curve: ${samples.map((s) => s.rps).join(' ')}`);
stopServer();
console.log(`${results.filter(Boolean).length} passed, ${results.filter((r) => !r).length} failed`);
process.exit(results.every(Boolean) ? 0 : 1);
