// The machine codes the TypeScript layer copies by hand from the Rust core
// still match it: `RefusalReason` (npm/src/types.ts) against `Reason::ALL`
// and `Reason::as_str` (crates/core/src/reason.rs, the AIVAX reasons,
// replay_guard_full and internal_error included), the configuration codes of
// `ToolctxErrorCode` (npm/src/errors.ts) against `ConfigError::CODES`
// (crates/core/src/config.rs), the forwardable fields (`ForwardField`,
// `AivaxForwardField`) against `FORWARD_FIELDS` and `AIVAX_FIELDS`, and
// `TUIX_HEADERS` against the core's (crates/core/src/forward.rs), and the
// result limits' `LimitCode` and `ImageType` (npm/src/results.ts) against
// the core's (`resultLimits`, crates/core/src/helpers/results.rs), and
// `IdempotencyOutcome` (npm/src/idempotency.ts) against the core's outcomes
// (`idemDefaults`, crates/core/src/helpers/idempotency.rs). The core's lists come from the built
// conventions module (`coreCodes`, crates/wasm-conventions); the unions are
// read from the built declarations with the TypeScript compiler API, as a
// user's editor sees them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import ts from 'typescript';

import { coreCodes, idemDefaults } from '../dist/wasm/node/toolctx_wasm_conventions.js';
import { TUIX_HEADERS } from 'toolctx';

/** The codes `ToolctxErrorCode` has besides the core's configuration codes: the TypeScript layer's own. */
const TS_ONLY_ERROR_CODES = ['body_already_parsed', 'idempotency_entry_invalid', 'idempotency_store_failed', 'internal', 'invalid_argument', 'replay_guard_async'];

/** The string literals of the union type alias `name` in the built declaration file `file` (under npm/dist). */
function unionMembers(file, name) {
  const url = new URL(`../dist/${file}`, import.meta.url);
  const source = ts.createSourceFile(file, readFileSync(url, 'utf8'), ts.ScriptTarget.ES2022, true);
  const alias = source.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === name);
  assert.ok(alias, `${name} is not declared in dist/${file}`);
  assert.ok(ts.isUnionTypeNode(alias.type), `${name} is not a union`);
  return alias.type.types.map((t) => {
    assert.ok(ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal), `${name} has a member that is not a string literal: ${t.getText(source)}`);
    return t.literal.text;
  });
}

const sorted = (list) => [...list].sort();
const core = JSON.parse(coreCodes());

test('RefusalReason is exactly the core\'s refusal reasons', () => {
  const reasons = unionMembers('types.d.ts', 'RefusalReason');
  assert.equal(new Set(reasons).size, reasons.length, 'a reason listed twice');
  assert.ok(core.reasons.length >= 34, 'the core listed too few reasons');
  assert.deepEqual(sorted(reasons), sorted(core.reasons));
});

test('ToolctxErrorCode is the core\'s configuration codes and the TypeScript layer\'s own', () => {
  const codes = unionMembers('errors.d.ts', 'ToolctxErrorCode');
  assert.equal(new Set(codes).size, codes.length, 'a code listed twice');
  assert.ok(core.config_errors.length >= 12, 'the core listed too few configuration codes');
  for (const own of TS_ONLY_ERROR_CODES) assert.ok(!core.config_errors.includes(own), `${own} is the core's now`);
  assert.deepEqual(sorted(codes), sorted([...core.config_errors, ...TS_ONLY_ERROR_CODES]));
});

test('ForwardField and AivaxForwardField are exactly the fields the core forwards', () => {
  assert.deepEqual(sorted(unionMembers('types.d.ts', 'ForwardField')), sorted(core.forward_fields));
  assert.deepEqual(sorted(unionMembers('types.d.ts', 'AivaxForwardField')), sorted(core.aivax_forward_fields));
  assert.ok(core.forward_fields.includes('task_id') && core.aivax_forward_fields.includes('external_user_id'));
});

test('TUIX_HEADERS names the core\'s Tuix headers', () => {
  const pairs = [];
  for (let i = 0; i + 1 < core.tuix_headers.length; i += 2) pairs.push([core.tuix_headers[i], core.tuix_headers[i + 1]]);
  assert.equal(pairs.length, 2);
  assert.deepEqual(
    Object.entries(TUIX_HEADERS).map(([member, header]) => [member, header.toLowerCase()]),
    pairs,
  );
});

test('LimitCode and ImageType are exactly the core\'s result-limit codes and image types', async () => {
  const { resultLimits } = await import('../dist/wasm/node/toolctx_wasm_conventions.js');
  const limits = JSON.parse(resultLimits());
  assert.deepEqual(unionMembers('results.d.ts', 'LimitCode'), limits.codes);
  assert.deepEqual(unionMembers('results.d.ts', 'ImageType'), limits.imageTypes);
  assert.equal(limits.codes.length, 5);
});

test('IdempotencyOutcome is exactly the core\'s idempotency outcomes', () => {
  const outcomes = JSON.parse(idemDefaults()).outcomes;
  assert.ok(outcomes.length > 0);
  assert.deepEqual(sorted(unionMembers('idempotency.d.ts', 'IdempotencyOutcome')), sorted(outcomes));
});
