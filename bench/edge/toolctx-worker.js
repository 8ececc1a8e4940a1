// The toolctx candidate, as a Workers user writes it: one verifier built
// from the bindings, `verify` on the request's headers and body bytes.
// GET /?n=N verifies the same request N times (the driver times it from
// outside: inside workerd the clock stands still while code runs).
import { createVerifier } from 'toolctx';

let state;

function setup(env) {
  return {
    verifier: createVerifier({ instanceId: env.INSTANCE, secrets: [env.SECRET] }),
    headers: new Headers(JSON.parse(env.HEADERS)),
    body: new TextEncoder().encode(env.BODY),
  };
}

export default {
  async fetch(request, env) {
    state ??= setup(env);
    const n = Number(new URL(request.url).searchParams.get('n') ?? 1);
    let context;
    for (let i = 0; i < n; i++) {
      const r = state.verifier.verify({ method: 'POST', headers: state.headers, body: state.body });
      if (r.outcome !== 'accept') return new Response(JSON.stringify(r), { status: 500 });
      context = r.context;
    }
    return Response.json({ task_id: context?.task_id });
  },
};
