// tests/edge/vectors FILE...: the conformance vectors (docs/VECTORS.md)
// through the npm package running inside workerd. The worker is bundled the
// way a Workers user's build does it (tests/edge/lib.mjs); judging and output
// are npm/test/vectors.mjs's own, with this verdict function.
import { join } from 'node:path';

import { runVectors } from '../../npm/test/vectors.mjs';
import { EDGE_DIR, bundle, scratchDir, startWorkerd } from './lib.mjs';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error('usage: tests/edge/vectors FILE...');
  process.exit(2);
}

const wire = (v) => (v instanceof Uint8Array ? { b64: Buffer.from(v).toString('base64') } : v);

const scratch = scratchDir('vectors');
let workerd;
try {
  const { modules } = await bundle(join(EDGE_DIR, 'harness', 'vectors-worker.js'), scratch.dir);
  workerd = await startWorkerd(scratch.dir, [{ name: 'vectors', modules, compatibilityDate: '2026-04-01' }]);
  const url = workerd.urls.vectors;
  await runVectors(paths, async (options, req, now) => {
    const res = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({
        options,
        now,
        request: { method: req.method, headers: req.headers.map(([n, v]) => [n, wire(v)]), body: wire(req.body) },
      }),
    });
    if (!res.ok) throw new Error(`harness answered ${res.status}: ${await res.text()}`);
    const out = await res.json();
    if (out.error !== undefined) throw new Error(out.error);
    return out.result;
  });
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
