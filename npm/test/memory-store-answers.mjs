// The memory store vectors' cases (tests/vectors/memory-store.json) run on
// the store `memoryIdempotencyStore` keeps its entries in, made as it makes
// it (`memoryStoreCore`: the capacity read by the core's settings table,
// the conventions module's store), handed in as `api`: the same function in
// Node (npm/test/memory-store.test.mjs) and inside workerd
// (tests/edge/harness/memory-store-worker.js). No imports, so that the
// worker's bundle holds the package once.

/** Runs case `c`: the size it was made for and each operation's answer (`null` for none). */
export function memoryStoreAnswers(api, c) {
  const store = api.memoryStoreCore(c.capacity);
  const answers = c.ops.map((op) => {
    switch (op.op) {
      case 'claim':
        return store.run(api.MEMORY_CLAIM, op.key, op.entry, op.ms, op.now) ?? null;
      case 'read':
        return store.run(api.MEMORY_READ, op.key, '', 0, op.now) ?? null;
      case 'complete':
        return store.run(api.MEMORY_COMPLETE, op.key, op.entry, op.ms, op.now) ?? null;
      case 'release':
        return store.run(api.MEMORY_RELEASE, op.key, op.entry, 0, op.now) !== undefined;
      case 'len':
        return store.size;
      default:
        throw new Error(`unknown operation ${op.op}`);
    }
  });
  // The size the store was made for (the core keeps at least one).
  return { capacity: api.settingNumber('idempotency_memory_entries', c.capacity), answers };
}

/** What differs between case `c`'s expectations and `got` (its answers), one line each. */
export function memoryStoreMisses(c, got) {
  const misses = [];
  if (got.capacity !== c.expect_capacity) misses.push(`capacity ${got.capacity}, expected ${c.expect_capacity}`);
  c.ops.forEach((op, i) => {
    if (op.op === 'complete') return;
    const [want, have] = [JSON.stringify(op.expect), JSON.stringify(got.answers?.[i])];
    if (want !== have) misses.push(`op ${i} (${op.op}): expected ${want}, got ${have}`);
  });
  return misses;
}
