// node npm/test/helpers-vectors.mjs FILE...: the helper vectors
// (tests/vectors/helpers.json) through the built package's
// `toolctx/helpers` (and the replay guard's `redisReplayStore`) in Node; tests/edge/helpers-vectors runs the same
// answers (npm/test/helper-answers.mjs) inside workerd through
// `runHelperVectors`. Prints one line per failed case, then
// `N passed, N failed`; exits non-zero when a case failed or none ran.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';

import { JUDGED, helperAnswer } from './helper-answers.mjs';

/** Runs every case of `paths` through `answer(kind, input)` (`{ answer }` or `{ error }`). */
export async function runHelperVectors(paths, answer) {
  let passed = 0;
  let failed = 0;
  for (const path of paths) {
    let doc;
    try {
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      console.log(`${path}: ${e.message}`);
      failed++;
      continue;
    }
    if (doc.format !== 'toolctx-helpers' || !Array.isArray(doc.cases) || doc.cases.length === 0) {
      console.log(`${path}: not helper vectors, or no cases`);
      failed++;
      continue;
    }
    for (const c of doc.cases) {
      const got = await answer(c.kind, c.input);
      const want = JUDGED[c.kind] ? Object.fromEntries(JUDGED[c.kind].map((k) => [k, c.expect[k]])) : c.expect;
      if (got.error === undefined && isDeepStrictEqual(got.answer, want)) passed++;
      else {
        failed++;
        console.log(`${path}: ${c.name}: expected ${JSON.stringify(c.expect)}, got ${JSON.stringify(got.error ?? got.answer)}`);
      }
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (failed > 0 || passed === 0) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const paths = process.argv.slice(2);
  if (paths.length === 0) {
    console.error('usage: node npm/test/helpers-vectors.mjs FILE...');
    process.exit(2);
  }
  // The replay guard's store is the main entry's (the verifier's module);
  // the cancellation key the conventions module's, which `toolctx/helpers` uses.
  const api = {
    ...(await import('toolctx/helpers')),
    redisReplayStore: (await import('toolctx')).redisReplayStore,
    cancelKey: (await import('../dist/wasm/node/toolctx_wasm_conventions.js')).cancelKey,
  };
  await runHelperVectors(paths, (kind, input) => helperAnswer(api, kind, input));
}
