// tests/edge/helpers-vectors FILE...: the helper vectors
// (tests/vectors/helpers.json) through `toolctx/helpers` inside workerd,
// bundled as a Workers build does it (it ships the conventions module
// alone); the answers and their judging are the Node runner's
// (npm/test/helper-answers.mjs, npm/test/helpers-vectors.mjs). Ends
// `N passed, N failed`.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { runHelperVectors } from '../../npm/test/helpers-vectors.mjs';
import { EDGE_DIR, bundle, scratchDir, startWorkerd } from './lib.mjs';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error('usage: tests/edge/helpers-vectors FILE...');
  process.exit(2);
}

const scratch = scratchDir('helper-vectors');
let workerd;
try {
  const dir = join(scratch.dir, 'helpers');
  mkdirSync(dir);
  const { modules } = await bundle(join(EDGE_DIR, 'harness', 'helper-vectors-worker.js'), dir);
  const shipped = modules.filter((m) => m.wasm).map((m) => m.name);
  if (JSON.stringify(shipped) !== JSON.stringify(['toolctx_wasm_conventions_bg.wasm'])) throw new Error(`the helpers worker ships ${shipped.join(', ')}`);
  workerd = await startWorkerd(scratch.dir, [{ name: 'helpers', modules, compatibilityDate: '2026-04-01' }]);
  const url = workerd.urls.helpers;
  await runHelperVectors(paths, async (kind, input) => {
    const res = await fetch(url, { method: 'POST', body: JSON.stringify({ kind, input }) });
    if (!res.ok) return { error: `the worker answered ${res.status}: ${await res.text()}` };
    return res.json();
  });
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
