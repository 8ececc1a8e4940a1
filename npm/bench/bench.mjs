#!/usr/bin/env node
// `npm run bench` (after `npm run build`): one run, side by side, on the same
// ~1 KB tools/call body and ~800-character token (minted here with node:crypto).
//
// toolctx's full verification (every step of the contract) against what a
// user would write instead: jose, fast-jwt and jsonwebtoken (with a
// KeyObject) to check the token, each followed by the same `_meta` binding
// check in plain JavaScript; and a hand-written node:crypto version as the
// physical floor. The JavaScript versions do less than toolctx (no duplicate
// member check, no strict base64url, no header checks): they are the fast
// path a user would take, not equivalents.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

import { createVerifier as fastJwtVerifier } from 'fast-jwt';
import { jwtVerify } from 'jose';
import jsonwebtoken from 'jsonwebtoken';

import { createVerifier } from 'toolctx';
import { CONTEXT_CLAIMS, bind } from './bind.mjs';
import { INSTANCE, SECRET, callBody, context, mintToken } from './fixture.mjs';

const NOW = Math.floor(Date.now() / 1000);
const SKEW = 30;
const MAX_AGE = 600;

// The token and the request.
const token = mintToken(NOW);
const body = Buffer.from(callBody(CONTEXT_CLAIMS));
// As Node hands them over: req.rawHeaders.
const rawHeaders = [
  'Host', '127.0.0.1:3000',
  'User-Agent', 'agentarea-platform/1.0',
  'Content-Type', 'application/json',
  'Accept', 'application/json, text/event-stream',
  'Content-Length', String(body.length),
  'Mcp-Protocol-Version', '2025-06-18',
  'X-AgentArea-Context', token,
];
// What the JavaScript versions read: Node's req.headers.
const headers = {};
for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i].toLowerCase()] = rawHeaders[i + 1];

// The candidates. Each verifies the same request and returns the context.
const toolctx = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });
const secretBytes = new TextEncoder().encode(SECRET);
const keyObject = createSecretKey(Buffer.from(SECRET));
const fastJwt = (cache) =>
  fastJwtVerifier({
    key: SECRET,
    algorithms: ['HS256'],
    allowedIss: 'agentarea',
    allowedAud: INSTANCE,
    clockTolerance: SKEW * 1000,
    maxAge: MAX_AGE * 1000,
    cache,
  });
const fastVerify = fastJwt(false);
const fastVerifyCached = fastJwt(true);
const jwtOptions = { algorithms: ['HS256'], issuer: 'agentarea', audience: INSTANCE, clockTolerance: SKEW, maxAge: MAX_AGE };

const expectedSignature = (s) => createHmac('sha256', SECRET).update(s).digest();
function floor(tok) {
  const dot1 = tok.indexOf('.');
  const dot2 = tok.indexOf('.', dot1 + 1);
  if (dot1 < 0 || dot2 < 0 || tok.indexOf('.', dot2 + 1) >= 0) throw new Error('token_malformed');
  const sig = Buffer.from(tok.slice(dot2 + 1), 'base64url');
  const want = expectedSignature(tok.slice(0, dot2));
  if (sig.length !== want.length || !timingSafeEqual(sig, want)) throw new Error('signature_invalid');
  const head = JSON.parse(Buffer.from(tok.slice(0, dot1), 'base64url').toString());
  if (head.alg !== 'HS256') throw new Error('alg_not_allowed');
  const p = JSON.parse(Buffer.from(tok.slice(dot1 + 1, dot2), 'base64url').toString());
  const now = Math.floor(Date.now() / 1000);
  if (p.iss !== 'agentarea' || p.aud !== INSTANCE) throw new Error('claims');
  if (!Number.isInteger(p.iat) || !Number.isInteger(p.exp)) throw new Error('claim_invalid');
  if (now >= p.exp + SKEW || p.iat > now + SKEW || now - p.iat > MAX_AGE + SKEW) throw new Error('times');
  return p;
}

const candidates = [
  ['toolctx (wasm, full verify)', () => {
    const r = toolctx.verify({ method: 'POST', headers: rawHeaders, body });
    if (r.outcome !== 'accept') throw new Error(JSON.stringify(r));
    return r.context;
  }],
  ['node:crypto by hand (floor)', () => bind(floor(headers['x-agentarea-context']), JSON.parse(body.toString()))],
  ['fast-jwt', () => bind(fastVerify(headers['x-agentarea-context']), JSON.parse(body.toString()))],
  ['jsonwebtoken (KeyObject)', () => bind(jsonwebtoken.verify(headers['x-agentarea-context'], keyObject, jwtOptions), JSON.parse(body.toString()))],
  ['jose jwtVerify (async)', async () => {
    const { payload } = await jwtVerify(headers['x-agentarea-context'], secretBytes, {
      algorithms: ['HS256'],
      issuer: 'agentarea',
      audience: INSTANCE,
      clockTolerance: SKEW,
      maxTokenAge: MAX_AGE,
    });
    return bind(payload, JSON.parse(body.toString()));
  }],
  ['fast-jwt with its cache (same token)', () => bind(fastVerifyCached(headers['x-agentarea-context']), JSON.parse(body.toString()))],
];

/** Runs `fn` in batches of 100 for `ms` milliseconds; returns ops/s. */
async function slice(fn, isAsync, ms) {
  let ops = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    if (isAsync) for (let i = 0; i < 100; i++) await fn();
    else for (let i = 0; i < 100; i++) fn();
    ops += 100;
  }
  return (ops * 1000) / (performance.now() - start);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Every candidate must accept the request before it is timed.
for (const [name, fn] of candidates) {
  const ctx = await fn();
  if (ctx.task_id !== context.task_id) throw new Error(`${name} did not verify`);
}

console.log(`token ${token.length} chars, body ${body.length} bytes, Node ${process.version}`);
// The machine is shared: candidates take turns in short slices, round after
// round, so a burst of load hits all of them alike; the median round counts.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 250);
const samples = candidates.map(() => []);
for (const [, fn] of candidates) await slice(fn, fn.constructor.name === 'AsyncFunction', 300); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < candidates.length; i++) {
    const fn = candidates[i][1];
    samples[i].push(await slice(fn, fn.constructor.name === 'AsyncFunction', SLICE_MS));
  }
}
const results = candidates.map(([name], i) => [name, median(samples[i])]);
// Each ratio is the median of the rounds' own ratios: a burst of load
// within one round moves both sides of it.
const ratios = samples.map((theirs) => median(samples[0].map((mine, round) => mine / theirs[round])));
console.log(`${ROUNDS} rounds of ${SLICE_MS} ms per candidate, median round; ratios: median of the rounds' ratios`);
console.log('');
console.log('candidate                              ops/s     us/op   toolctx is');
for (const [i, [name, ops]] of results.entries()) {
  const ratio = name.startsWith('toolctx') ? '' : `${ratios[i].toFixed(2)}x`;
  console.log(`${name.padEnd(36)} ${Math.round(ops).toString().padStart(8)} ${(1e6 / ops).toFixed(1).padStart(9)}   ${ratio}`);
}

const wasm = new URL('../dist/wasm/node/toolctx_wasm_bg.wasm', import.meta.url);
const raw = statSync(wasm).size;
const gz = gzipSync(readFileSync(wasm), { level: 9 }).length;
console.log('');
console.log(`wasm after wasm-opt: ${raw} bytes raw (${(raw / 1024).toFixed(1)} KiB, budget 120), ${gz} bytes gzip (${(gz / 1024).toFixed(1)} KiB, budget 50)`);
