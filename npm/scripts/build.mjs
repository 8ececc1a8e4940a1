#!/usr/bin/env node
// Builds the npm package into npm/dist:
//   1. crates/wasm (the AgentArea verifier, loaded by `toolctx`) and
//      crates/wasm-conventions (tool names, RFC 8785, the Tuix key, the AIVAX
//      verifier, loaded only by `toolctx/conventions`, `toolctx/aivax` and
//      `toolctx/helpers`) for wasm32-unknown-unknown with the workspace
//      profile `wasm`;
//   2. wasm-bindgen twice for each: experimental-nodejs-module (Node,
//      synchronous) and web (initSync, for workerd and browsers), into npm/wasm/;
//   3. wasm-opt from the npm package `binaryen` (Debian's breaks the output);
//   4. the core's telemetry names, asked of the conventions module just
//      built, written to src/generated/telemetry.ts (not committed);
//   5. tsc (src/node/* and src/web/* into dist/node/ and dist/web/), then
//      the wasm-bindgen glue copied to dist/wasm/{node,web}/, where
//      dist/node/glue.js and dist/web/glue.js (and the conventions glues) import it.
// Needs the wasm32 target and a wasm-bindgen CLI matching Cargo.lock
// (scripts/test-npm installs both).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const npmDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(npmDir, '..');
const wasmOut = join(npmDir, 'wasm');
const dist = join(npmDir, 'dist');
const bin = (name) => join(npmDir, 'node_modules', '.bin', name);

function run(cmd, args, cwd = root, env = process.env) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { cwd, stdio: 'inherit', env });
}

/** The two modules: cargo package, file stem, budget stated in npm/test/pack.mjs. */
const MODULES = [
  { pkg: 'toolctx-wasm', stem: 'toolctx_wasm' },
  { pkg: 'toolctx-wasm-conventions', stem: 'toolctx_wasm_conventions' },
];

// The workspace profile `wasm` (lto, panic abort) at opt-level 3 rather than
// "s": measured with npm/bench, verification is about 1.5x faster for ~6 KB
// more wasm, within the size budget (120 KB raw, 50 KB gzip; npm/test/pack.mjs).
// Each package is built on its own so that features and code stay out of
// the other module.
// WebAssembly SIMD (simd128), which Node 20, workerd and current browsers
// run: the sha2 crate then hashes with its SIMD backend, about 0.6 us less
// per verification in Node and 7 KB less wasm than its scalar code.
const simd = '-C target-feature=+simd128';
// wasm-opt at -O3, not -Oz: measured with npm/bench/bench.mjs, about 0.1 us
// less per verification for some 300 bytes more. `--converge` runs the
// passes until the module stops shrinking (about 250 bytes gzip);
// `--low-memory-unused` lets wasm-opt fold constant offsets into loads and
// stores (about 350 bytes gzip less), which is sound because no address
// below 1 KB is ever used: the data start at 1 MB, and the 1 MB stack below
// them grows down toward 0 but never that deep (the JSON reader's depth
// limit bounds every recursion).
const WASM_OPT = ['-O3', '--converge', '--low-memory-unused'];
// Without the custom sections no host reads (the target features, the
// producers): about 200 bytes of the budget (issue 32).
const STRIP = ['--strip-target-features', '--strip-producers'];
const rustflags = process.env.CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS;
const cargoEnv = {
  ...process.env,
  CARGO_PROFILE_WASM_OPT_LEVEL: process.env.CARGO_PROFILE_WASM_OPT_LEVEL ?? '3',
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS: rustflags ? `${rustflags} ${simd}` : simd,
};
rmSync(wasmOut, { recursive: true, force: true });
for (const { pkg, stem } of MODULES) {
  run('cargo', ['build', '-p', pkg, '--target', 'wasm32-unknown-unknown', '--profile', 'wasm'], root, cargoEnv);
  const built = join(root, 'target', 'wasm32-unknown-unknown', 'wasm', `${stem}.wasm`);
  for (const target of ['experimental-nodejs-module', 'web']) {
    const dir = join(wasmOut, target === 'web' ? 'web' : 'node');
    run('wasm-bindgen', [built, '--out-dir', dir, '--target', target]);
  }
  // One optimised module serves both glues (wasm-bindgen emits the same module for both).
  const nodeWasm = join(wasmOut, 'node', `${stem}_bg.wasm`);
  const webWasm = join(wasmOut, 'web', `${stem}_bg.wasm`);
  if (!readFileSync(nodeWasm).equals(readFileSync(webWasm))) {
    throw new Error(`wasm-bindgen emitted different modules for node and web (${stem})`);
  }
  run(bin('wasm-opt'), [...WASM_OPT, ...STRIP, nodeWasm, '-o', nodeWasm]);
  cpSync(nodeWasm, webWasm);
}

// The core's telemetry names and buckets (crates/core/src/telemetry.rs), as
// the conventions module just built answers them (`coreCodes`), written
// where `src/telemetry.ts` imports them: the package carries no hand-kept
// copy, and the verifier's module, which every user ships, is not asked at
// run time (its size budget has no room for them).
const conventions = await import(pathToFileURL(join(wasmOut, 'node', 'toolctx_wasm_conventions.js')).href);
const telemetry = JSON.parse(conventions.coreCodes()).telemetry;
// Names as their literal types (`outcomes` a tuple of them), the buckets as numbers.
const frozen = (v) =>
  !Array.isArray(v) ? JSON.stringify(v) : `Object.freeze(${JSON.stringify(v)}${typeof v[0] === 'string' ? ' as const' : ''})`;
const members = Object.entries(telemetry).map(([k, v]) => `  ${k}: ${frozen(v)},`);
mkdirSync(join(npmDir, 'src', 'generated'), { recursive: true });
writeFileSync(
  join(npmDir, 'src', 'generated', 'telemetry.ts'),
  [
    '// Written by scripts/build.mjs from the core (crates/core/src/telemetry.rs,',
    "// through the conventions module's `coreCodes`): not edited, not committed.",
    '',
    "/** The core's telemetry names (`toolctx_core::telemetry`). */",
    'export const TELEMETRY = Object.freeze({',
    ...members,
    '});',
    '',
  ].join('\n'),
);

rmSync(dist, { recursive: true, force: true });
run(bin('tsc'), ['-p', 'tsconfig.json'], npmDir);
mkdirSync(join(dist, 'wasm'), { recursive: true });
for (const flavour of ['node', 'web']) {
  cpSync(join(wasmOut, flavour), join(dist, 'wasm', flavour), {
    recursive: true,
    filter: (src) => !src.endsWith('.gitignore'),
  });
}
// Every entry of the `exports` map, for each flavour: dist/node/* for Node,
// dist/web/* for workerd, workers and browsers.
for (const flavour of ['node', 'web']) {
  for (const f of ['index.js', 'index.d.ts', 'conventions.js', 'aivax.js', 'helpers.js']) {
    if (!existsSync(join(dist, flavour, f))) throw new Error(`build did not produce dist/${flavour}/${f}`);
  }
}

for (const { stem } of MODULES) {
  const bytes = readFileSync(join(dist, 'wasm', 'node', `${stem}_bg.wasm`));
  const raw = bytes.length;
  const gz = gzipSync(bytes, { level: 9 }).length;
  console.log(`wasm size (${stem}): ${raw} bytes raw (${(raw / 1024).toFixed(1)} KiB), ${gz} bytes gzip (${(gz / 1024).toFixed(1)} KiB)`);
}
