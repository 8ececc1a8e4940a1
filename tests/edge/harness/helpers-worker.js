// `toolctx/helpers` alone inside workerd: answers the canonical hash of the
// JSON it is sent. Nothing here names the conventions module, so this checks
// that a bundler keeps the helpers' own loading of it (package.json
// `sideEffects`).
import { canonicalHash } from 'toolctx/helpers';

export default {
  async fetch(request) {
    try {
      return Response.json({ result: await canonicalHash(await request.json()) });
    } catch (e) {
      return Response.json({ error: `${e.name}: ${e.message}` });
    }
  },
};
