#!/usr/bin/env node
// Conformance vector runner for the npm package (format: docs/VECTORS.md),
// the Node twin of crates/core/examples/vectors.rs.
//
//   node npm/test/vectors.mjs tests/vectors/*.json tests/vectors/conventions/*.json
//
// Runs every case through the BUILT package (npm/dist) and its public API:
// createVerifier and verify with the case's `now`; in a file with
// `"profile": "aivax"`, createAivaxVerifier and verify; a table case
// (`expected` next to `instance` and `tool`, or `session_id`, `turn`, `tool`
// and `arguments`) through qualifiedToolName or tuixIdempotencyKey. Prints one line per failed
// case, `file: case: expected ..., got ...`, then `N passed, N failed`; exits
// non-zero when a case failed or a file could not be read.
//
// Other runtimes' runners import `runVectors` and hand it their own verdict
// function (tests/edge/vectors runs each case inside workerd), and their own
// conventions (`{ aivax, table }`, shaped like `nodeConventions`) to run the
// convention files.
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { createAivaxVerifier } from 'toolctx/aivax';
import { qualifiedToolName, tuixIdempotencyKey } from 'toolctx/conventions';
import { createVerifier } from 'toolctx';

const encoder = new TextEncoder();

/** Vector config names (CONTRACT §1) to createVerifier options; others are ignored, as the Rust runner does. */
const OPTION_NAMES = {
  instance_id: 'instanceId',
  secrets: 'secrets',
  credential: 'credential',
  require_context: 'requireContext',
  clock_skew_s: 'clockSkewSeconds',
  max_token_age_s: 'maxTokenAgeSeconds',
  max_body_bytes: 'maxBodyBytes',
  max_token_bytes: 'maxTokenBytes',
  protocol_majors: 'protocolMajors',
};

/** AIVAX vector config names (CONTRACT §7) to createAivaxVerifier options. */
const AIVAX_OPTION_NAMES = {
  hook_key: 'hookKey',
  require_nonce: 'requireNonce',
  max_bcrypt_cost: 'maxBcryptCost',
  credential: 'credential',
  max_body_bytes: 'maxBodyBytes',
};

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Case config merged over the file's, one level deep. */
function merged(file, c) {
  const out = { ...(isObject(file.config) ? file.config : {}) };
  if (isObject(c.config)) Object.assign(out, c.config);
  return out;
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
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEq(a[k], b[k]));
}

const show = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

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
    if (expect.status !== r.status || expect.code !== r.code) return bad(`reject ${show(expect.status)} ${show(expect.code)}`);
    if (typeof expect.reason === 'string' && expect.reason !== r.reason) return bad(`reason ${expect.reason}`);
    if (Object.hasOwn(expect, 'id') && !jsonEq(expect.id, r.id)) return bad(`id ${show(expect.id)}`);
    // The rendered body must say the same as the verdict.
    let body;
    try {
      body = JSON.parse(r.body);
    } catch (e) {
      return `refusal body not JSON: ${e.message}`;
    }
    const consistent =
      body.jsonrpc === '2.0' &&
      body.error?.code === r.code &&
      body.error?.message === r.message &&
      body.error?.data?.reason === r.reason &&
      jsonEq(body.id, r.id);
    return consistent ? null : `refusal body inconsistent: ${r.body}`;
  }
  return bad(outcome);
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
function nodeVerdict(opts, req, now) {
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
};

async function runFile(path, tally, verdict, conventions) {
  let file;
  try {
    file = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    tally.broken.push(`${path}: ${e.message}`);
    return;
  }
  if (!isObject(file) || !Array.isArray(file.cases)) {
    tally.broken.push(`${path}: no cases`);
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
        const now = Number.isInteger(c.now) ? c.now : Number.isInteger(file.now) ? file.now : 0;
        failure = judge(c.expect, await verdict(options(merged(file, c)), request(c), now));
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
 * those cases fail. Prints the failures and the `N passed, N failed` line
 * and sets the exit status.
 */
export async function runVectors(paths, verdict, conventions) {
  const tally = { passed: 0, failed: 0, failures: [], broken: [] };
  for (const p of paths) await runFile(p, tally, verdict, conventions);
  for (const line of [...tally.failures, ...tally.broken]) console.log(line);
  console.log(`${tally.passed} passed, ${tally.failed + tally.broken.length} failed`);
  process.exitCode = tally.failed === 0 && tally.broken.length === 0 ? 0 : 1;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const paths = process.argv.slice(2);
  if (paths.length === 0) {
    console.error('usage: node npm/test/vectors.mjs FILE...');
    process.exit(2);
  }
  await runVectors(paths, nodeVerdict, nodeConventions);
}
