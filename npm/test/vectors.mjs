#!/usr/bin/env node
// Conformance vector runner for the npm package (format: docs/VECTORS.md),
// the Node twin of the Rust runner (crates/vectors).
//
//   node npm/test/vectors.mjs tests/vectors/*.json tests/vectors/conventions/*.json
//
// Runs every case through the BUILT package (npm/dist) and its public API:
// createVerifier and verify with the case's `now` (the config's `forward`
// handed on as is); a case with `expect.forward` (lower-case header -> the
// exact value the upstream must get, or null: must not reach it) also
// through the Node middleware, judged on the headers it leaves on `req`
// (`rawHeaders` and `headers`); in a file with
// `"profile": "aivax"`, createAivaxVerifier and verify; a table case
// (`expected` next to `instance` and `tool`, or `session_id`, `turn`, `tool`
// and `arguments`) through qualifiedToolName or tuixIdempotencyKey. Prints one line per failed
// case, `file: case: expected ..., got ...`, then `N passed, N failed`; exits
// non-zero when a case failed or a file could not be read.
//
// The files are read without rounding (readJson: JSON.parse would turn an id
// of 12345678901234567890 into another number and 1e400 into Infinity).
// Expected ids are judged exactly against the refusal body's text; the
// package's own fields (`id`, the context) are JS values, JSON.parse's
// doubles, so a number there must be the double nearest the expected one.
//
// Other runtimes' runners import `runVectors` and hand it their own verdict
// function (tests/edge/vectors runs each case inside workerd), and their own
// conventions (`{ aivax, table }`, shaped like `nodeConventions`) to run the
// convention files.
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { createAivaxVerifier } from 'toolctx/aivax';
import { qualifiedToolName, tuixIdempotencyKey } from 'toolctx/conventions';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

import { createVerifier, toolctx } from 'toolctx';

const encoder = new TextEncoder();

/** Vector config names (CONTRACT §1) to createVerifier options; others are ignored, as the Rust runner does. */
export const OPTION_NAMES = {
  instance_id: 'instanceId',
  secrets: 'secrets',
  credential: 'credential',
  require_context: 'requireContext',
  clock_skew_s: 'clockSkewSeconds',
  max_token_age_s: 'maxTokenAgeSeconds',
  max_body_bytes: 'maxBodyBytes',
  max_token_bytes: 'maxTokenBytes',
  protocol_majors: 'protocolMajors',
  forward: 'forward',
};

/** AIVAX vector config names (CONTRACT §7) to createAivaxVerifier options. */
const AIVAX_OPTION_NAMES = {
  hook_key: 'hookKey',
  require_nonce: 'requireNonce',
  max_bcrypt_cost: 'maxBcryptCost',
  credential: 'credential',
  max_body_bytes: 'maxBodyBytes',
  forward: 'forward',
};

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);

/** A number as a vector file or a refusal body writes it. */
class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

const TOKEN = /[ \t\n\r]*(?:([{}[\],:])|("(?:[^"\\\x00-\x1f]|\\.)*")|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null))/y;

/** JSON.parse, except that every number is a JsonNumber holding its text. */
export function readJson(text) {
  TOKEN.lastIndex = 0;
  const next = () => {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (m === null) throw new SyntaxError(`JSON: unexpected input at ${at}`);
    return m;
  };
  const value = (m) => {
    if (m[2] !== undefined) return JSON.parse(m[2]);
    if (m[3] !== undefined) return new JsonNumber(m[3]);
    if (m[4] !== undefined) return JSON.parse(m[4]);
    if (m[1] === '[') {
      const out = [];
      let t = next();
      if (t[1] === ']') return out;
      for (;;) {
        out.push(value(t));
        t = next();
        if (t[1] === ']') return out;
        if (t[1] !== ',') throw new SyntaxError('JSON: expected , or ]');
        t = next();
      }
    }
    if (m[1] === '{') {
      const entries = [];
      let t = next();
      if (t[1] === '}') return {};
      for (;;) {
        const k = t[2] !== undefined ? JSON.parse(t[2]) : undefined;
        if (k === undefined || next()[1] !== ':') throw new SyntaxError('JSON: expected "name":');
        entries.push([k, value(next())]);
        t = next();
        if (t[1] === '}') return Object.fromEntries(entries);
        if (t[1] !== ',') throw new SyntaxError('JSON: expected , or }');
        t = next();
      }
    }
    throw new SyntaxError(`JSON: unexpected ${m[1]}`);
  };
  const v = value(next());
  if (!/^[ \t\n\r]*$/.test(text.slice(TOKEN.lastIndex))) throw new SyntaxError('JSON: trailing data');
  return v;
}

/** A value of a vector file as JS options take it: numbers as JSON.parse gives them. */
function plain(v) {
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map(plain);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** A number's exact value as a string key: sign, significant digits, and where the point stands. */
function numberKey(text) {
  const [, sign, whole, frac = '', exp = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  const digits = whole + frac;
  const significant = digits.replace(/^0+/, '');
  if (significant === '') return '0';
  const point = BigInt(whole.length - (digits.length - significant.length)) + BigInt(exp);
  return `${sign}0.${significant.replace(/0+$/, '')}e${point}`;
}

/** Numbers by value: two texts exactly; a JS number (the package's) as the double nearest the text. */
function numberEq(a, b) {
  if (a instanceof JsonNumber && b instanceof JsonNumber) return numberKey(a.text) === numberKey(b.text);
  const n = (x) => (x instanceof JsonNumber ? Number(x.text) : x);
  return typeof n(a) === 'number' && n(a) === n(b);
}

/** Case config merged over the file's, one level deep, as JS values. */
function merged(file, c) {
  const out = { ...(isObject(file.config) ? file.config : {}) };
  if (isObject(c.config)) Object.assign(out, c.config);
  return plain(out);
}

function options(config, names = OPTION_NAMES) {
  const o = {};
  for (const [k, v] of Object.entries(config)) {
    if (Object.hasOwn(names, k)) o[names[k]] = v;
  }
  return o;
}

/** JSON equality as the contract defines it: objects ignore member order, arrays keep it, numbers by value. */
function jsonEq(a, b) {
  const number = (x) => typeof x === 'number' || x instanceof JsonNumber;
  if (number(a) || number(b)) return numberEq(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEq(a[k], b[k]));
}

/** JSON text of `v`, numbers of the file as written. */
function show(v) {
  if (v === undefined) return 'undefined';
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(show).join(',')}]`;
  if (isObject(v)) return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${show(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

function describe(r) {
  switch (r.outcome) {
    case 'pass':
      return 'pass';
    case 'accept':
      return `accept ${JSON.stringify(r.context)}`;
    case 'reject':
      return `reject ${r.status} ${r.code} ${r.reason} id=${show(r.id)}`;
    default:
      return show(r);
  }
}

/** Checks one result against `expect`; returns what differs, or null. */
function judge(expect, r) {
  const outcome = isObject(expect) && typeof expect.outcome === 'string' ? expect.outcome : '';
  const bad = (what) => `expected ${what}, got ${describe(r)}`;
  if (outcome === 'pass' && r.outcome === 'pass') return null;
  if (outcome === 'accept' && r.outcome === 'accept') {
    if (isObject(expect.context)) {
      for (const [k, v] of Object.entries(expect.context)) {
        const present = Object.hasOwn(r.context, k);
        const got = present ? r.context[k] : null;
        if ((!present && v !== null) || !jsonEq(v, got)) return bad(`context.${k} = ${show(v)}`);
      }
    }
    return null;
  }
  if (outcome === 'reject' && r.outcome === 'reject') {
    if (!jsonEq(expect.status, r.status) || !jsonEq(expect.code, r.code)) return bad(`reject ${show(expect.status)} ${show(expect.code)}`);
    if (typeof expect.reason === 'string' && expect.reason !== r.reason) return bad(`reason ${expect.reason}`);
    let body;
    try {
      body = readJson(r.body);
    } catch (e) {
      return `refusal body not JSON: ${e.message}`;
    }
    // The id exactly as the body writes it, and `r.id` as JSON.parse reads it.
    if (Object.hasOwn(expect, 'id') && !(jsonEq(expect.id, body.id) && jsonEq(expect.id, r.id))) {
      return bad(`id ${show(expect.id)} (body ${r.body})`);
    }
    // The rendered body must say the same as the verdict.
    const consistent =
      body.jsonrpc === '2.0' &&
      jsonEq(body.error?.code, r.code) &&
      body.error?.message === r.message &&
      body.error?.data?.reason === r.reason &&
      jsonEq(body.id, r.id);
    return consistent ? null : `refusal body inconsistent: ${r.body}`;
  }
  return bad(outcome);
}

/**
 * Checks what a front end handed on against `expect.forward`: `views` are
 * `[label, [name, value][]]`, each the request's headers as one view of it
 * sees them. A string must arrive exactly once with exactly that value; null
 * must not arrive at all (in any letter case).
 */
function judgeForward(want, views) {
  if (!isObject(want)) return 'expect.forward is not an object';
  for (const [label, pairs] of views) {
    for (const [name, value] of Object.entries(want)) {
      const got = pairs.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
      if (value === null) {
        if (got.length > 0) return `${label}: ${name} must not reach the upstream, got ${show(got)}`;
      } else if (typeof value !== 'string') {
        return `expect.forward.${name} is neither a string nor null`;
      } else if (got.length !== 1 || got[0] !== value) {
        return `${label}: ${name} = ${show(value)}, got ${show(got)}`;
      }
    }
  }
  return null;
}

/** The case's request as the public API takes it. */
function request(c) {
  const req = c.request;
  if (!isObject(req)) throw new Error('no request');
  const method = typeof req.method === 'string' ? req.method : 'POST';
  const headers = [];
  for (const pair of Array.isArray(req.headers) ? req.headers : []) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      throw new Error(`bad header pair ${show(pair)}`);
    }
    // The file's strings stand for their UTF-8 bytes; ASCII goes in as a string (the usual path).
    const ascii = /^[\x00-\x7f]*$/.test(pair[1]);
    headers.push([pair[0], ascii ? pair[1] : encoder.encode(pair[1])]);
  }
  let body = '';
  if (typeof req.body === 'string') body = req.body;
  else if (typeof req.body_b64 === 'string') body = new Uint8Array(Buffer.from(req.body_b64, 'base64'));
  return { method, headers, body };
}

/** The verdict of the package in this Node process. */
export function nodeVerdict(opts, req, now) {
  let verifier;
  try {
    verifier = createVerifier(opts);
  } catch (e) {
    throw new Error(`config: ${e.message}`);
  }
  try {
    return verifier.verify(req, { now });
  } finally {
    verifier.free();
  }
}

/** `nodeVerdict`, checked against the verdict through fetch's `Headers` (`sameThroughHeaders`). */
function nodeVerdictAndHeaders(opts, req, now) {
  const result = nodeVerdict(opts, req, now);
  sameThroughHeaders(opts, req, now, result);
  return result;
}

/**
 * From fetch's `Headers` the package writes only the headers the core's
 * check reads (`headerNames`): the verdict must be the one every header
 * gives (`result`, from the case's list of pairs). Compared where a
 * `Headers` holds the same request: no name twice (fetch joins them), no
 * value it would trim or refuse.
 */
function sameThroughHeaders(opts, req, now, result) {
  const names = new Set(req.headers.map(([n]) => n.toLowerCase()));
  if (names.size !== req.headers.length) return;
  let headers;
  try {
    headers = new Headers(req.headers.map(([n, v]) => [n, latin1(v)]));
  } catch {
    return;
  }
  if (req.headers.some(([n, v]) => headers.get(n) !== latin1(v))) return;
  headersCompared++;
  const verifier = createVerifier(opts);
  let read;
  try {
    read = verifier.verify({ ...req, headers }, { now });
  } finally {
    verifier.free();
  }
  if (!isDeepStrictEqual(read, result)) throw new Error(`through Headers: ${show(read)}, not ${show(result)} as with every header`);
}

/** How many cases `sameThroughHeaders` compared. */
let headersCompared = 0;

/** A header value as Node's `rawHeaders` holds it: one char per byte. */
const latin1 = (v) => (typeof v === 'string' ? v : Buffer.from(v).toString('latin1'));

/**
 * What the package's Node middleware hands on for the request: a real
 * `IncomingMessage` (method, `rawHeaders`, the body streamed), through
 * `toolctx(verifier, { now })`; the views `[label, pairs]` of the headers
 * it left on `req` (`rawHeaders`, `headers`), or throws when it refused.
 */
async function nodeForwarded(opts, req, now, create = createVerifier) {
  const verifier = create(opts);
  try {
    const middleware = toolctx(verifier, { now: () => now });
    const incoming = new IncomingMessage(new Socket());
    incoming.method = req.method;
    incoming.url = '/mcp';
    incoming.rawHeaders = req.headers.flatMap(([n, v]) => [n, latin1(v)]);
    const body = typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : Buffer.from(req.body);
    return await new Promise((resolve, reject) => {
      const res = {
        statusCode: 200,
        setHeader() {},
        end(text) {
          reject(new Error(`the middleware refused: ${res.statusCode} ${text}`));
        },
      };
      middleware(incoming, res, (err) => {
        if (err) return reject(err);
        const raw = [];
        for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) raw.push([incoming.rawHeaders[i], incoming.rawHeaders[i + 1]]);
        const parsed = Object.entries(incoming.headers).flatMap(([n, v]) => (Array.isArray(v) ? v.map((x) => [n, x]) : [[n, String(v)]]));
        resolve([
          ['req.rawHeaders', raw],
          ['req.headers', parsed],
        ]);
      });
      if (body.length > 0) incoming.push(body);
      incoming.push(null);
    });
  } finally {
    verifier.free();
  }
}

/**
 * A table case's inputs, or null when the case is not one: the same test as
 * crates/core/examples/vectors.rs (`table_case`).
 */
function tableInput(c) {
  const s = (k) => (typeof c?.[k] === 'string' ? c[k] : undefined);
  if (s('expected') === undefined) return null;
  if (s('instance') !== undefined && s('tool') !== undefined) return { kind: 'name', instance: s('instance'), tool: s('tool') };
  if (s('session_id') !== undefined && s('turn') !== undefined && s('tool') !== undefined) {
    return { kind: 'tuix', sessionId: s('session_id'), turn: s('turn'), tool: s('tool'), arguments: s('arguments') ?? '{}' };
  }
  return null;
}

function judgeTable(expected, got) {
  return got === expected ? null : `expected ${expected}, got ${show(got)}`;
}

/** The conventions of the package in this Node process. */
export const nodeConventions = {
  /** The table value: a model-facing name or a Tuix key (arguments as the file's JSON text). */
  table(input) {
    if (input.kind === 'name') return qualifiedToolName(input.instance, input.tool);
    return tuixIdempotencyKey({ sessionId: input.sessionId, turn: input.turn, tool: input.tool, arguments: JSON.parse(input.arguments) });
  },
  /** The AIVAX verdict: createAivaxVerifier options and the request as `verify` takes it. */
  aivax(opts, req) {
    let verifier;
    try {
      verifier = createAivaxVerifier(opts);
    } catch (e) {
      throw new Error(`config: ${e.message}`);
    }
    try {
      return verifier.verify(req);
    } finally {
      verifier.free();
    }
  },
  /** What the Node middleware hands on for an AIVAX case (see `nodeForwarded`). */
  aivaxForwarded(opts, req) {
    return nodeForwarded(opts, req, 0, createAivaxVerifier);
  },
};

async function runFile(path, tally, verdict, conventions, forwarded) {
  let file;
  try {
    file = readJson(readFileSync(path, 'utf8'));
  } catch (e) {
    tally.broken.push(`${path}: ${e.message}`);
    return;
  }
  if (!isObject(file) || !Array.isArray(file.cases)) {
    tally.broken.push(`${path}: no cases`);
    return;
  }
  if (file.format !== undefined) {
    // Another format (helpers, settings, memory store, store address), with
    // its own runner: a note, not a failure, so tests/vectors/*.json runs.
    tally.skipped.push(`skipped: ${path}: "format": ${JSON.stringify(file.format)} is not verdict vectors`);
    return;
  }
  const aivax = file.profile === 'aivax';
  for (const [i, c] of file.cases.entries()) {
    const name = typeof c?.name === 'string' ? c.name : `#${i}`;
    let failure;
    try {
      const table = tableInput(c);
      if ((table !== null || aivax) && conventions === undefined) throw new Error('this runner has no conventions to run this case');
      if (table !== null) failure = judgeTable(c.expected, await conventions.table(table));
      else if (aivax) failure = judge(c.expect, await conventions.aivax(options(merged(file, c), AIVAX_OPTION_NAMES), request(c)));
      else {
        const now = [c.now, file.now].map(plain).find(Number.isInteger) ?? 0;
        failure = judge(c.expect, await verdict(options(merged(file, c)), request(c), now));
        if (failure === null && isObject(c.expect) && Object.hasOwn(c.expect, 'forward')) {
          if (forwarded === undefined) throw new Error('this runner has no front end to check expect.forward');
          failure = judgeForward(c.expect.forward, await forwarded(options(merged(file, c)), request(c), now));
        }
      }
      if (failure === null && aivax && isObject(c.expect) && Object.hasOwn(c.expect, 'forward')) {
        if (conventions?.aivaxForwarded === undefined) throw new Error('this runner has no front end to check expect.forward');
        tally.forward++;
        const opts = options(merged(file, c), AIVAX_OPTION_NAMES);
        failure = judgeForward(c.expect.forward, await conventions.aivaxForwarded(opts, request(c)));
      }
    } catch (e) {
      failure = e.message;
    }
    if (failure === null) tally.passed++;
    else {
      tally.failed++;
      tally.failures.push(`${path}: ${name}: ${failure}`);
    }
  }
}

/**
 * Runs every case of every file through `verdict(options, request, now)`
 * (createVerifier options, the request as `verify` takes it, Unix seconds;
 * it returns `verify`'s result or a promise of it, and throws `config: ...`
 * for a configuration the package refused). `conventions` (`{ table, aivax }`,
 * as `nodeConventions`) runs the table cases and the AIVAX files; without it
 * those cases fail. `forwarded(options, request, now)` runs a case with
 * `expect.forward` through the runtime's front end and answers the views
 * `[label, [name, value][]]` of the headers it handed on (as
 * `nodeForwarded`); without it those cases fail. Prints the failures and
 * the `N passed, N failed` line (and how many cases checked
 * `expect.forward`) and sets the exit status.
 */
export async function runVectors(paths, verdict, conventions, forwarded) {
  const tally = { passed: 0, failed: 0, failures: [], broken: [], skipped: [], forward: 0 };
  const counted = forwarded && (async (...args) => (tally.forward++, forwarded(...args)));
  for (const p of paths) await runFile(p, tally, verdict, conventions, counted);
  for (const line of [...tally.skipped, ...tally.failures, ...tally.broken]) console.log(line);
  if (tally.forward > 0) console.log(`${tally.forward} cases checked expect.forward through the front end`);
  if (headersCompared > 0) console.log(`${headersCompared} cases gave the same verdict through fetch's Headers (only the headers the check reads)`);
  console.log(`${tally.passed} passed, ${tally.failed + tally.broken.length} failed`);
  process.exitCode = tally.failed === 0 && tally.broken.length === 0 ? 0 : 1;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const paths = process.argv.slice(2);
  if (paths.length === 0) {
    console.error('usage: node npm/test/vectors.mjs FILE...');
    process.exit(2);
  }
  await runVectors(paths, nodeVerdictAndHeaders, nodeConventions, nodeForwarded);
}
