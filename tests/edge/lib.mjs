// Shared by the edge vector runner, the end-to-end test and bench/edge:
// bundle a worker with esbuild the way a Workers user's build does (the
// package resolved through its `exports` conditions, the `.wasm` kept as a
// module of its own), write a capnp config, and run npm's `workerd` binary
// on 127.0.0.1, always stopping it afterwards.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import * as esbuild from 'esbuild';
import workerdPackage from 'workerd';

export const EDGE_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(EDGE_DIR, '..', '..');
export const EXAMPLE_DIR = join(ROOT, 'examples', 'cloudflare-worker');

// npm's workerd package (CommonJS) exports the binary's path as `default`.
const WORKERD = workerdPackage.default;
export const WORKERD_VERSION = workerdPackage.version;

/** The export conditions wrangler's bundler uses for Workers. */
export const CONDITIONS = ['workerd', 'worker', 'browser'];

/** A fresh temporary directory, removed by `cleanup()`. */
export function scratchDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `toolctx-edge-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Bundles `entry` into `outDir/worker.js` (ESM) and copies every imported
 * `.wasm` next to it, as wrangler does: the import stays an import, and
 * workerd hands the module a compiled `WebAssembly.Module`.
 * Returns the workerd module list and the bytes a user would upload.
 */
export async function bundle(entry, outDir, { minify = false } = {}) {
  // `import 'toolctx'` finds this repository's built package (npm/), as if
  // installed, so that its `exports` map decides which entry is bundled;
  // scripts/release points TOOLCTX_PACKAGE_DIR at the tarball installed
  // from the registry's way (npm install toolctx-X.tgz) instead.
  const packages = join(outDir, 'node_modules');
  mkdirSync(packages, { recursive: true });
  symlinkSync(process.env.TOOLCTX_PACKAGE_DIR ?? join(ROOT, 'npm'), join(packages, 'toolctx'), 'dir');
  const wasmFiles = new Map();
  const wasmAsModule = {
    name: 'wasm-module',
    setup(build) {
      build.onResolve({ filter: /\.wasm$/ }, async (args) => {
        if (args.pluginData === 'wasm-module') return undefined;
        // esbuild's own resolution (relative, absolute or a package's path), then keep it external.
        const found = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'wasm-module' });
        if (found.errors.length > 0) return { errors: found.errors };
        const file = found.path;
        const name = basename(file);
        if (wasmFiles.has(name) && wasmFiles.get(name) !== file) return { errors: [{ text: `two .wasm files named ${name}` }] };
        wasmFiles.set(name, file);
        return { path: `./${name}`, external: true };
      });
    },
  };
  await esbuild.build({
    entryPoints: [entry],
    outfile: join(outDir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: CONDITIONS,
    mainFields: ['module', 'main'],
    // The example has no node_modules of its own in this repository.
    nodePaths: [packages, join(EDGE_DIR, 'node_modules')],
    minify,
    legalComments: 'none',
    logLevel: 'error',
    plugins: [wasmAsModule],
  });
  const modules = [{ name: 'worker.js', esModule: join(outDir, 'worker.js') }];
  for (const [name, file] of wasmFiles) {
    copyFileSync(file, join(outDir, name));
    modules.push({ name, wasm: join(outDir, name) });
  }
  return { modules, size: sizeOf(modules.map((m) => m.esModule ?? m.wasm)) };
}

/** Raw and gzip (level 9, each file on its own) byte counts. */
export function sizeOf(files) {
  let raw = 0;
  let gzip = 0;
  for (const f of files) {
    const bytes = readFileSync(f);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

/** A capnp text literal: `\"`, `\\` and `\xNN` for control characters; the rest as is (UTF-8). */
const capnpString = (s) =>
  `"${String(s).replace(/["\\\x00-\x1f\x7f]/g, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))}"`;

/**
 * A capnp config: one socket per worker on 127.0.0.1 (port 0: the kernel
 * picks a free one, reported back on the control fd), each worker's fetch()
 * allowed to reach loopback origins only.
 * workers: [{ name, modules, bindings: { NAME: text }, compatibilityDate, compatibilityFlags }]
 */
export function capnpConfig(dir, workers) {
  // capnp resolves `embed` paths against the config file's directory.
  const embed = (file) => `embed ${capnpString(relative(dir, file))}`;
  const services = [];
  const sockets = [];
  const defs = [];
  workers.forEach((w, i) => {
    const modules = w.modules
      .map((m) => (m.wasm ? `(name = ${capnpString(m.name)}, wasm = ${embed(m.wasm)})` : `(name = ${capnpString(m.name)}, esModule = ${embed(m.esModule)})`))
      .join(',\n      ');
    const bindings = Object.entries(w.bindings ?? {})
      .map(([k, v]) => `(name = ${capnpString(k)}, text = ${capnpString(v)})`)
      .join(',\n      ');
    const flags = (w.compatibilityFlags ?? []).map(capnpString).join(', ');
    services.push(`(name = ${capnpString(w.name)}, worker = .w${i})`);
    sockets.push(`(name = ${capnpString(w.name)}, address = "127.0.0.1:0", http = (), service = ${capnpString(w.name)})`);
    defs.push(`const w${i} :Workerd.Worker = (
  modules = [
      ${modules}
  ],
  bindings = [
      ${bindings}
  ],
  compatibilityDate = ${capnpString(w.compatibilityDate)},
  compatibilityFlags = [${flags}],
  globalOutbound = "loopback",
);`);
  });
  services.push('(name = "loopback", network = (allow = ["local"]))');
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    ${services.join(',\n    ')}
  ],
  sockets = [
    ${sockets.join(',\n    ')}
  ],
);

${defs.join('\n\n')}
`;
}

/**
 * Writes the config into `dir` and starts workerd on it. Resolves once every
 * socket listens, with `{ urls: { name: 'http://127.0.0.1:port' }, stop, logs }`.
 * A workerd that exits early rejects with its stderr.
 */
export async function startWorkerd(dir, workers, { timeoutMs = 20000 } = {}) {
  const config = join(dir, 'config.capnp');
  writeFileSync(config, capnpConfig(dir, workers));
  // fd 3 is the control channel: one JSON line per socket, once it listens.
  const child = spawn(WORKERD, ['serve', '--control-fd=3', config], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  stopOnExit(child);
  let logs = '';
  child.stdout.on('data', (d) => (logs += d));
  child.stderr.on('data', (d) => (logs += d));
  const stop = () => stopChild(child);
  const urls = {};
  const ready = new Promise((resolve, reject) => {
    let buffered = '';
    child.stdio[3].on('data', (d) => {
      buffered += d;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const msg = JSON.parse(line);
        if (msg.event === 'listen') urls[msg.socket] = `http://127.0.0.1:${msg.port}`;
        if (workers.every((w) => urls[w.name])) resolve();
      }
    });
    child.on('exit', (code, signal) => reject(new Error(`workerd exited (${code ?? signal}) before listening:\n${logs}`)));
    setTimeout(() => reject(new Error(`workerd did not listen within ${timeoutMs} ms:\n${logs}`)), timeoutMs).unref();
  });
  try {
    await ready;
  } catch (e) {
    await stop();
    throw e;
  }
  return { urls, stop, logs: () => logs };
}

const running = new Set();
let hooked = false;

/** Children die with this process, also on Ctrl-C or an uncaught error. */
function stopOnExit(child) {
  running.add(child);
  child.on('exit', () => running.delete(child));
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      for (const c of running) c.kill('SIGKILL');
      process.exit(130);
    });
  }
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    // workerd drains open connections on SIGTERM; SIGINT stops it at once.
    child.kill('SIGINT');
  });
}

/** The example's wrangler.jsonc (comments allowed, as wrangler reads it). */
export function readJsonc(file) {
  const text = readFileSync(file, 'utf8');
  // Drop // and /* */ comments outside strings.
  const stripped = text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m, str) => str ?? '');
  return JSON.parse(stripped);
}

/** An HS256 compact JWS, by hand with node:crypto (never with toolctx's own minting): the npm tests' own. */
export { mint } from '../../npm/test/support.mjs';
