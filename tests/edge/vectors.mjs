// tests/edge/vectors FILE...: the conformance vectors (docs/VECTORS.md) and
// the convention vectors (tool names, Tuix keys, AIVAX) through the npm
// package running inside workerd. Each worker is bundled the way a Workers
// user's build does it (tests/edge/lib.mjs): the verifier's worker from
// `toolctx` alone, which ships only the verifier's wasm; the conventions'
// worker from `toolctx/conventions`, `toolctx/aivax` and `toolctx/helpers`,
// which ship only the conventions module; a worker of `toolctx/helpers`
// alone, checked once against node:crypto. A case with `expect.forward` is
// also run through the fetch wrapper (`withToolctx`) inside workerd and
// judged on the headers of the Request it hands on. Judging and output are
// npm/test/vectors.mjs's own, with these verdict functions.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { runVectors } from '../../npm/test/vectors.mjs';
import { EDGE_DIR, bundle, scratchDir, startWorkerd } from './lib.mjs';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error('usage: tests/edge/vectors FILE...');
  process.exit(2);
}

const wire = (v) => (v instanceof Uint8Array ? { b64: Buffer.from(v).toString('base64') } : v);
const wireRequest = (req) => ({ method: req.method, headers: req.headers.map(([n, v]) => [n, wire(v)]), body: wire(req.body) });

/** Bundles a harness worker into its own directory; checks which `.wasm` it ships. */
async function bundled(name, wasm) {
  const dir = join(scratch.dir, name);
  mkdirSync(dir);
  const { modules } = await bundle(join(EDGE_DIR, 'harness', `${name}-worker.js`), dir);
  const shipped = modules.filter((m) => m.wasm).map((m) => m.name);
  if (JSON.stringify(shipped) !== JSON.stringify([wasm])) throw new Error(`the ${name} worker ships ${shipped.join(', ')}, not ${wasm} alone`);
  return { name, modules, compatibilityDate: '2026-04-01' };
}

async function ask(url, job, what = 'result') {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(job) });
  if (!res.ok) throw new Error(`harness answered ${res.status}: ${await res.text()}`);
  // A number the harness could not write as JSON comes as { $number } (vectors-worker.js).
  const out = JSON.parse(await res.text(), (_, v) =>
    typeof v === 'object' && v !== null && typeof v.$number === 'string' && Object.keys(v).length === 1 ? Number(v.$number) : v,
  );
  if (out.error !== undefined) throw new Error(out.error);
  return out[what];
}

const scratch = scratchDir('vectors');
let workerd;
try {
  const workers = [
    await bundled('vectors', 'toolctx_wasm_bg.wasm'),
    await bundled('conventions', 'toolctx_wasm_conventions_bg.wasm'),
    await bundled('helpers', 'toolctx_wasm_conventions_bg.wasm'),
  ];
  workerd = await startWorkerd(scratch.dir, workers);
  const { vectors, conventions, helpers } = workerd.urls;
  const hashed = await fetch(helpers, { method: 'POST', body: '{"b":[1.0,"é"],"a":null}' }).then((r) => r.json());
  const want = createHash('sha256').update('{"a":null,"b":[1,"é"]}').digest('hex');
  if (hashed.result !== want) throw new Error(`toolctx/helpers alone in workerd: ${JSON.stringify(hashed)}, not ${want}`);
  await runVectors(
    paths,
    (options, req, now) => ask(vectors, { options, now, request: wireRequest(req) }),
    {
      table: (input) => ask(conventions, { table: input }),
      aivax: (options, req) => ask(conventions, { aivax: { options, request: wireRequest(req) } }),
      // The conventions worker ships the conventions module alone (no fetch
      // wrapper): the AIVAX verdict's own `upstream`, applied to the request.
      aivaxForwarded: async (options, req) => {
        const result = await ask(conventions, { aivax: { options, request: wireRequest(req) } });
        if (result.upstream === undefined) throw new Error(`no upstream on the verdict: ${JSON.stringify(result)}`);
        const { remove, set } = result.upstream;
        const kept = req.headers.filter(([n]) => !remove.includes(n.toLowerCase()));
        return [["the AIVAX verdict's upstream inside workerd", [...kept, ...set]]];
      },
    },
    async (options, req, now) => [['the Request withToolctx hands on', await ask(vectors, { options, now, request: wireRequest(req), forward: true }, 'forwarded')]],
  );
} finally {
  await workerd?.stop();
  scratch.cleanup();
}
