// The in-memory idempotency store inside workerd: one POST per case of
// tests/vectors/memory-store.json, answered by
// npm/test/memory-store-answers.mjs on the store `memoryIdempotencyStore`
// keeps its entries in (the package's own module, found through its
// `toolctx/helpers` entry, which binds the conventions module's web glue).
import 'toolctx/helpers';
import * as coreFunctions from '../../../npm/dist/core-functions.js';
import { memoryStoreCore } from '../../../npm/dist/idempotency.js';

import { memoryStoreAnswers } from '../../../npm/test/memory-store-answers.mjs';

const api = { ...coreFunctions, memoryStoreCore };

export default {
  async fetch(request) {
    try {
      return Response.json(memoryStoreAnswers(api, await request.json()));
    } catch (e) {
      return Response.json({ error: String(e) });
    }
  },
};
