// tests/edge/helpers-vectors FILE...: the helper vectors
// (tests/vectors/helpers.json) through `toolctx/helpers` inside workerd,
// bundled as a Workers build does it (it ships the conventions module
// alone; the replay guard's kinds go to a worker with the main entry and
// the verifier's module); the answers and their judging are the Node runner's
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
  const bundled = async (name, file, wasm) => {
    const dir = join(scratch.dir, name);
    mkdirSync(dir);
    const { modules } = await bundle(join(EDGE_DIR, 'harness', file), dir);
    const shipped = modules.filter((m) => m.wasm).map((m) => m.name);
    if (JSON.stringify(shipped) !== JSON.stringify([wasm])) throw new Error(`the ${name} worker ships ${shipped.join(', ')}`);
    return { name, modules, compatibilityDate: '2026-04-01' };
  };
  workerd = await startWorkerd(scratch.dir, [
    await bundled('helpers', 'helper-vectors-worker.js', 'toolctx_wasm_conventions_bg.wasm'),
    await bundled('replay', 'replay-vectors-worker.js', 'toolctx_wasm_bg.wasm'),
  ]);
  await runHelperVectors(paths, async (kind, input) => {
    const url = kind.startsWith('replay.') ? workerd.urls.replay : workerd.urls.helpers;
    const res = await fetch(url, { method: 'POST', body: JSON.stringify({ kind, input }) });
    if (!res.ok) return { error: `the worker answered ${res.status}: ${await res.text()}` };
    return res.json();
  });
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
