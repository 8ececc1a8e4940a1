// tests/edge/memory-store FILE: the in-memory idempotency store vectors
// (tests/vectors/memory-store.json) inside workerd, on the store
// `memoryIdempotencyStore` keeps its entries in, bundled as a Workers build
// does it (the conventions module alone); the answers and their judging are
// the Node runner's (npm/test/memory-store-answers.mjs). Ends
// `N passed, N failed`.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { memoryStoreMisses } from '../../npm/test/memory-store-answers.mjs';
import { EDGE_DIR, bundle, scratchDir, startWorkerd } from './lib.mjs';

const [file] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: tests/edge/memory-store FILE');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(file, 'utf8'));
if (doc.format !== 'toolctx-memory-store') {
  console.log(`${file}: not memory store vectors`);
  process.exit(1);
}

const scratch = scratchDir('memory-store');
let workerd;
let passed = 0;
let failed = 0;
try {
  const dir = join(scratch.dir, 'memory');
  mkdirSync(dir);
  const { modules } = await bundle(join(EDGE_DIR, 'harness', 'memory-store-worker.js'), dir);
  const shipped = modules.filter((m) => m.wasm).map((m) => m.name);
  if (JSON.stringify(shipped) !== JSON.stringify(['toolctx_wasm_conventions_bg.wasm'])) throw new Error(`the worker ships ${shipped.join(', ')}`);
  workerd = await startWorkerd(scratch.dir, [{ name: 'memory', modules, compatibilityDate: '2026-04-01' }]);
  for (const c of doc.cases) {
    const res = await fetch(workerd.urls.memory, { method: 'POST', body: JSON.stringify(c) });
    const got = res.ok ? await res.json() : { error: `the worker answered ${res.status}` };
    const misses = got.error !== undefined ? [got.error] : memoryStoreMisses(c, got);
    if (misses.length === 0) passed++;
    else {
      failed++;
      console.log(`${file}: ${c.name}: ${misses.join('; ')}`);
    }
  }
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(passed > 0 && failed === 0 ? 0 : 1);
