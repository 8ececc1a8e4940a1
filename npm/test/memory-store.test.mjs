// The in-memory idempotency store vectors (tests/vectors/memory-store.json,
// docs/VECTORS.md "Memory store vectors") through the built package, one
// test per case, each operation at its `now`; the answers are
// npm/test/memory-store-answers.mjs's (workerd: tests/edge/memory-store.mjs).
//
//     node --test npm/test/memory-store.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import 'toolctx/helpers';
import * as coreFunctions from '../dist/core-functions.js';
import { memoryStoreCore } from '../dist/idempotency.js';
import { memoryStoreAnswers, memoryStoreMisses } from './memory-store-answers.mjs';

const file = new URL('../../tests/vectors/memory-store.json', import.meta.url);
const doc = JSON.parse(readFileSync(file, 'utf8'));
const api = { ...coreFunctions, memoryStoreCore };

test('the file holds memory store vectors', () => {
  assert.equal(doc.format, 'toolctx-memory-store');
  assert.ok(doc.cases.length > 0);
});

for (const c of doc.cases) {
  test(c.name, () => {
    assert.deepEqual(memoryStoreMisses(c, memoryStoreAnswers(api, c)), []);
  });
}
