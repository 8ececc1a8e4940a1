#!/usr/bin/env node
// node tests/wasm-abi/vectors.mjs MODULE FILE...: every case of the vector
// files through the raw verifier module (target/wasm-abi/toolctx.wasm), the
// artifact the Go and Java front ends embed, judged by the npm runner's
// judge (npm/test/vectors.mjs, `runVectors`). Each case runs twice: the
// verdict headers first (`toolctx_check_headers`, then
// `toolctx_verify_body` on the ticket) and, for `expect.forward`, the whole
// check at once (`toolctx_verify`), its removed and upstream headers
// applied to the request's. Ends `N passed, N failed`.
import { OPTION_NAMES, runVectors } from '../../npm/test/vectors.mjs';
import { AbiError, Instance, bytes, heads } from './abi.mjs';

const [path, ...files] = process.argv.slice(2);
if (path === undefined || files.length === 0) {
  console.error('usage: node tests/wasm-abi/vectors.mjs toolctx.wasm FILE...');
  process.exit(2);
}
const instance = new Instance(path);
// The configure flags' bits, by name, as the module gives them (as the Go and Java hosts read them).
const flagList = instance.list('toolctx_configure_flags', []);
const FLAGS = Object.fromEntries(Array.from({ length: flagList.length / 2 }, (_, i) => [flagList[2 * i], Number(flagList[2 * i + 1])]));
if (!(FLAGS.include_reason > 0)) throw new Error(`toolctx_configure_flags: no include_reason in ${JSON.stringify(flagList)}`);
const SNAKE = Object.fromEntries(Object.entries(OPTION_NAMES).map(([snake, camel]) => [camel, snake]));

/** The case's options (createVerifier's names) as the core's configuration JSON. */
function configure(opts) {
  const config = Object.fromEntries(Object.entries(opts).map(([k, v]) => [SNAKE[k], v]));
  try {
    // Refusals carry their reason, as the npm runner's verifier does.
    return instance.list('toolctx_configure', [JSON.stringify(config)], FLAGS.include_reason | FLAGS.include_reason_given, 0n);
  } catch (e) {
    throw new Error(`config: ${e instanceof AbiError ? `${e.code}: ${e.message}` : e}`);
  }
}

/** A verdict string (crates/wasm-boundary) as `verify` results are judged. */
function result(answer) {
  if (answer === 'p') return { outcome: 'pass' };
  if (answer.startsWith('r')) return { outcome: 'reject', ...JSON.parse(answer.slice(1)) };
  if (answer.startsWith('a')) {
    const [context, , ...set] = answer.slice(1).split('\n');
    const upstream = [];
    for (let i = 0; i + 1 < set.length; i += 2) upstream.push([set[i], set[i + 1]]);
    return { outcome: 'accept', context: JSON.parse(context), upstream };
  }
  throw new Error(`unexpected verdict string ${JSON.stringify(answer.slice(0, 40))}`);
}

const body = (req) => bytes(req.body);

function verdict(opts, req, now) {
  configure(opts);
  const [lens, all] = heads(req.method, req.headers);
  const first = instance.text('toolctx_check_headers', [lens, all]);
  if (!first.startsWith('b')) return result(first);
  const ticket = Number(first.slice(1));
  return result(instance.text('toolctx_verify_body', [body(req)], ticket, BigInt(now)));
}

function forwarded(opts, req, now) {
  const [, , ...removed] = configure(opts);
  const [lens, all] = heads(req.method, req.headers);
  const r = result(instance.text('toolctx_verify', [lens, all, body(req)], BigInt(now)));
  if (r.outcome === 'reject') throw new Error(`refused: ${r.reason}`);
  const gone = new Set(removed);
  const latin1 = (v) => (typeof v === 'string' ? v : Buffer.from(v).toString('latin1'));
  const kept = req.headers.filter(([n]) => !gone.has(n.toLowerCase())).map(([n, v]) => [n, latin1(v)]);
  return [['raw module', [...kept, ...(r.upstream ?? [])]]];
}

await runVectors(files, verdict, undefined, forwarded);
