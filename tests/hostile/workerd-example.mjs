// The example Worker (examples/cloudflare-worker) in npm's workerd on
// 127.0.0.1, bundled as wrangler would (tests/edge/lib.mjs), for the Python
// drivers in this folder:
//
//   node tests/hostile/workerd-example.mjs ORIGIN_URL
//
// Secret and instance id from TOOLCTX_SECRET and TOOLCTX_INSTANCE_ID (and
// TOOLCTX_TUIX, passed on when set). Prints
// one JSON line {"url": ..., "pid": ...} once workerd listens; stops workerd
// and exits when standard input closes (or on SIGTERM), printing workerd's
// log to stderr.
import { join } from 'node:path';

import { EXAMPLE_DIR, bundle, readJsonc, scratchDir, startWorkerd } from '../edge/lib.mjs';

const origin = process.argv[2];
if (!origin) {
  console.error('usage: workerd-example.mjs ORIGIN_URL');
  process.exit(2);
}
const scratch = scratchDir('hostile');
const wrangler = readJsonc(join(EXAMPLE_DIR, 'wrangler.jsonc'));
const { modules } = await bundle(join(EXAMPLE_DIR, wrangler.main), join(scratch.dir, 'worker'), { minify: wrangler.minify });
const workerd = await startWorkerd(scratch.dir, [
  {
    name: 'edge',
    modules,
    compatibilityDate: wrangler.compatibility_date,
    compatibilityFlags: wrangler.compatibility_flags ?? [],
    bindings: {
      ...wrangler.vars,
      ORIGIN_URL: origin,
      TOOLCTX_INSTANCE_ID: process.env.TOOLCTX_INSTANCE_ID,
      TOOLCTX_SECRET: process.env.TOOLCTX_SECRET,
      ...(process.env.TOOLCTX_TUIX && { TOOLCTX_TUIX: process.env.TOOLCTX_TUIX }),
    },
  },
]);
process.stdout.write(`${JSON.stringify({ url: workerd.urls.edge, pid: process.pid })}\n`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await workerd.stop();
  process.stderr.write(workerd.logs());
  scratch.cleanup();
  process.exit(0);
}
process.stdin.on('end', shutdown);
process.stdin.on('close', shutdown);
process.stdin.resume();
process.on('SIGTERM', shutdown);
