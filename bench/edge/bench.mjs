// The edge benchmark (not a test): inside workerd, toolctx's full verify
// against jose's jwtVerify plus the same `_meta` check in JavaScript, on the
// same ~1 KB tools/call body and ~800-character token, with an HS256 check
// written by hand on WebCrypto as the floor; then the bytes a user ships for
// each (worker bundle + wasm, minified, raw and gzip).
//
// Inside workerd the clock does not move while JavaScript runs, so the
// driver times from outside: each request verifies N times, N sized so a
// request takes about SLICE_MS, minus the round trip of an empty request.
// Candidates take turns, round after round, and the median round counts.
// Run with bench/edge/run.sh.
import { join } from 'node:path';

import { INSTANCE, SECRET, callBody, context, mintToken } from '../../npm/bench/fixture.mjs';
import { EXAMPLE_DIR, ROOT, WORKERD_VERSION, bundle, readJsonc, scratchDir, startWorkerd } from '../../tests/edge/lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 200);
const HERE = join(ROOT, 'bench', 'edge');

const token = mintToken(Math.floor(Date.now() / 1000));
const body = callBody();
// What a Worker's request.headers holds for such a call.
const headers = [
  ['content-type', 'application/json'],
  ['accept', 'application/json, text/event-stream'],
  ['content-length', String(Buffer.byteLength(body))],
  ['mcp-protocol-version', '2025-06-18'],
  ['user-agent', 'agentarea-platform/1.0'],
  ['x-agentarea-context', token],
];
const bindings = { INSTANCE, SECRET, BODY: body, HEADERS: JSON.stringify(headers) };

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const scratch = scratchDir('bench');
let workerd;
try {
  const compatibilityDate = readJsonc(join(EXAMPLE_DIR, 'wrangler.jsonc')).compatibility_date;
  const built = {
    toolctx: await bundle(join(HERE, 'toolctx-worker.js'), join(scratch.dir, 'toolctx'), { minify: true }),
    jose: await bundle(join(HERE, 'jose-worker.js'), join(scratch.dir, 'jose'), { minify: true }),
    floor: await bundle(join(HERE, 'floor-worker.js'), join(scratch.dir, 'floor'), { minify: true }),
    example: await bundle(join(EXAMPLE_DIR, 'src', 'index.js'), join(scratch.dir, 'example'), { minify: true }),
  };
  workerd = await startWorkerd(scratch.dir, [
    { name: 'toolctx', modules: built.toolctx.modules, bindings, compatibilityDate },
    { name: 'jose', modules: built.jose.modules, bindings, compatibilityDate },
    { name: 'floor', modules: built.floor.modules, bindings, compatibilityDate },
  ]);
  const candidates = [
    ['toolctx verify (wasm, full contract)', `${workerd.urls.toolctx}/?`],
    ['jose jwtVerify, CryptoKey + _meta check', `${workerd.urls.jose}/?key=cryptokey&`],
    ['jose jwtVerify, Uint8Array + _meta check', `${workerd.urls.jose}/?key=bytes&`],
    ['WebCrypto by hand + _meta check (floor)', `${workerd.urls.floor}/?`],
  ];

  /** Wall time of one request verifying n times, in ms. */
  async function timed(base, n) {
    const start = performance.now();
    const res = await fetch(`${base}n=${n}`);
    const out = await res.json();
    const ms = performance.now() - start;
    if (!res.ok || out.task_id !== (n > 0 ? context.task_id : undefined)) throw new Error(`${base}: ${JSON.stringify(out)}`);
    return ms;
  }

  // Every candidate verifies the request before it is timed; warm up; size N.
  const sizes = [];
  for (const [, base] of candidates) {
    for (let i = 0; i < 5; i++) await timed(base, 200);
    const ms = await timed(base, 1000);
    sizes.push(Math.max(50, Math.round((1000 * SLICE_MS) / ms)));
  }
  const samples = candidates.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < candidates.length; i++) {
      const base = candidates[i][1];
      const empty = median([await timed(base, 0), await timed(base, 0), await timed(base, 0)]);
      const ms = await timed(base, sizes[i]);
      samples[i].push((sizes[i] * 1000) / Math.max(ms - empty, 1e-3));
    }
  }
  const ops = samples.map(median);
  // Ratios: the median of the rounds' own ratios (a burst of load within
  // one round moves both sides of it).
  const ratioOver = (theirs) => median(samples[0].map((mine, round) => mine / theirs(round)));

  console.log(`workerd ${WORKERD_VERSION}, compatibility date ${compatibilityDate}, Node ${process.version} driver`);
  console.log(`token ${token.length} chars, body ${Buffer.byteLength(body)} bytes; ${ROUNDS} rounds of ~${SLICE_MS} ms per candidate, median round; ratios: median of the rounds' ratios`);
  console.log('');
  console.log('candidate (inside workerd)                      ops/s     us/op   toolctx is');
  candidates.forEach(([name], i) => {
    const ratio = i === 0 ? '' : `${ratioOver((round) => samples[i][round]).toFixed(2)}x`;
    console.log(`${name.padEnd(44)} ${Math.round(ops[i]).toString().padStart(8)} ${(1e6 / ops[i]).toFixed(1).padStart(9)}   ${ratio}`);
  });
  const best = ratioOver((round) => Math.max(samples[1][round], samples[2][round]));
  console.log(`toolctx vs the faster jose variant: ${best.toFixed(2)}x (goal: at least 1.5x, issue 32)`);

  console.log('');
  console.log('what a user ships (esbuild --minify, conditions workerd/worker/browser; gzip -9 per file)');
  const row = (name, b) => {
    const files = b.modules.map((m) => (m.wasm ? 'wasm' : 'js')).join(' + ');
    console.log(`${name.padEnd(44)} ${String(b.size.raw).padStart(7)} B raw (${kib(b.size.raw).padStart(9)})  ${String(b.size.gzip).padStart(6)} B gzip (${kib(b.size.gzip).padStart(8)})  ${files}`);
  };
  row('toolctx verify worker (worker.js + .wasm)', built.toolctx);
  row('jose verify worker (+ _meta check)', built.jose);
  row('examples/cloudflare-worker (proxy + verify)', built.example);
  console.log(`toolctx total gzip ${kib(built.example.size.gzip)} for the example Worker (goal: under 150 KB)`);
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
