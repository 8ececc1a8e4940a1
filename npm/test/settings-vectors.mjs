// The settings vectors (tests/vectors/settings.json) through the built
// package's reading of a user's value (the core's table in the helpers'
// module, as idempotent, memoryIdempotencyStore and progress read theirs):
// each case's raw value as JavaScript holds the decoded JSON, the value read
// or the ToolctxError (code and message). Prints one line per failed case,
// then `N passed, N failed`; exits non-zero when a case failed or none ran.
//
//     node npm/test/settings-vectors.mjs tests/vectors/settings.json
import { readFileSync } from 'node:fs';
import 'toolctx/helpers';
import { core } from '../dist/core-functions.js';

const [file = new URL('../../tests/vectors/settings.json', import.meta.url).pathname] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(file, 'utf8'));
if (doc.format !== 'toolctx-settings') {
  console.log(`${file}: not settings vectors`);
  process.exit(1);
}
let passed = 0;
let failed = 0;
for (const c of doc.cases) {
  let got;
  try {
    got = { value: core().readSetting(c.setting, c.raw) };
  } catch (e) {
    const nl = typeof e === 'string' ? e.indexOf('\n') : -1;
    got = nl < 0 ? { thrown: String(e) } : { error: e.slice(0, nl), message: e.slice(nl + 1) };
  }
  if (JSON.stringify(got) === JSON.stringify(c.expect)) passed++;
  else {
    failed++;
    console.log(`${file}: ${c.name}: expected ${JSON.stringify(c.expect)}, got ${JSON.stringify(got)}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(passed > 0 && failed === 0 ? 0 : 1);
