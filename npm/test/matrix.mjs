// Runs the suites that loop over the cells of sdks.mjs (integration,
// helpers, replay, and the two-process Redis suites) with node's test
// runner, prints their output as `node --test` does, then a table: SDK
// version × wiring × protocol era → tests passed and failed, and a last line
// `N passed, N failed`. Exits 1 on any failure (or when nothing ran).
//
//   node npm/test/matrix.mjs [test files...]
//
// A test belongs to the cell whose label names one of its enclosing
// describe blocks; tests outside every cell (the stores themselves, the
// verifier's own replay cases) are counted on a row of their own.
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

import { cells } from './sdks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SUITES = ['integration.test.mjs', 'helpers.test.mjs', 'replay.test.mjs', 'helpers-redis.test.mjs', 'replay-redis.test.mjs'];
const files = process.argv.length > 2 ? process.argv.slice(2) : SUITES.map((f) => join(here, f));

const NONE = { label: '(no MCP SDK)', sdk: { name: '', version: '' }, wiring: { name: 'the stores, the verifier alone' }, client: { protocol: '' } };
const rows = new Map([...cells, NONE].map((c) => [c.label, { cell: c, passed: 0, failed: 0, skipped: 0 }]));

/** The names of the tests now running in each file, by nesting. */
const stacks = new Map();
const failures = [];

const stream = run({ files, concurrency: Math.max(1, availableParallelism() - 1) });
stream.on('test:start', ({ file, nesting, name }) => {
  const stack = stacks.get(file) ?? [];
  stack.length = nesting;
  stack.push(name);
  stacks.set(file, stack);
});
const count = (outcome) => (data) => {
  const { file, nesting, name, details, skip, todo } = data;
  if (details?.type === 'suite' && !(outcome === 'failed' && details.error?.failureType !== 'subtestsFailed')) return;
  const path = [...(stacks.get(file) ?? []).slice(0, nesting), name];
  const row = rows.get(path.find((n) => rows.has(n))) ?? rows.get(NONE.label);
  if (skip !== undefined || todo !== undefined) row.skipped += 1;
  else row[outcome] += 1;
  if (outcome === 'failed') failures.push(`${file ? relative(process.cwd(), file) : '?'}: ${path.join(' > ')}`);
};
stream.on('test:pass', count('passed'));
stream.on('test:fail', count('failed'));
for await (const chunk of stream.compose(spec)) process.stdout.write(chunk);

const table = [['SDK', 'wiring', 'protocol', 'passed', 'failed']];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const { cell, passed: p, failed: f, skipped: s } of rows.values()) {
  if (p + f + s === 0) continue;
  passed += p;
  failed += f;
  skipped += s;
  const sdk = cell.sdk.name ? `${cell.sdk.name} (${cell.sdk.version})` : cell.label;
  table.push([sdk, cell.wiring.name, cell.client.protocol, String(p), String(f) + (s ? ` (${s} skipped)` : '')]);
}
const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
const line = (r) => r.map((v, i) => (i >= 3 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ');
process.stdout.write(`\nSDK matrix (${files.map((f) => relative(here, f)).join(', ')})\n`);
process.stdout.write(`${line(table[0])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
for (const r of table.slice(1)) process.stdout.write(`${line(r)}\n`);
if (failures.length > 0) process.stdout.write(`\nfailed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
if (skipped > 0) process.stdout.write(`\n${skipped} skipped\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
