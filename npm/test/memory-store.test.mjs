// The in-memory idempotency store vectors (tests/vectors/memory-store.json,
// docs/VECTORS.md "Memory store vectors") through the built package: the
// store `memoryIdempotencyStore` keeps its entries in, made as it makes it
// (`memoryStoreCore`: the capacity read by the core's settings table, the
// conventions module's store), one test per case, each operation at its
// `now`.
//
//     node --test npm/test/memory-store.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import 'toolctx/helpers';
import { MEMORY_CLAIM, MEMORY_COMPLETE, MEMORY_READ, MEMORY_RELEASE, settingNumber } from '../dist/core-functions.js';
import { memoryStoreCore } from '../dist/idempotency.js';

const file = new URL('../../tests/vectors/memory-store.json', import.meta.url);
const doc = JSON.parse(readFileSync(file, 'utf8'));

test('the file holds memory store vectors', () => {
  assert.equal(doc.format, 'toolctx-memory-store');
  assert.ok(doc.cases.length > 0);
});

/** One operation's answer, as the vectors write it (`null` for none). */
function run(store, op) {
  switch (op.op) {
    case 'claim':
      return store.run(MEMORY_CLAIM, op.key, op.entry, op.ms, op.now) ?? null;
    case 'read':
      return store.run(MEMORY_READ, op.key, '', 0, op.now) ?? null;
    case 'complete':
      return store.run(MEMORY_COMPLETE, op.key, op.entry, op.ms, op.now);
    case 'release':
      return store.run(MEMORY_RELEASE, op.key, op.entry, 0, op.now) !== undefined;
    case 'len':
      return store.size;
    default:
      throw new Error(`unknown operation ${op.op}`);
  }
}

for (const c of doc.cases) {
  test(c.name, () => {
    // The size the store is made for (the core keeps at least one).
    assert.equal(settingNumber('idempotency_memory_entries', c.capacity), c.expect_capacity);
    const store = memoryStoreCore(c.capacity);
    c.ops.forEach((op, i) => {
      const got = run(store, op);
      if (op.op !== 'complete') assert.deepEqual(got, op.expect, `op ${i} (${op.op})`);
    });
  });
}
