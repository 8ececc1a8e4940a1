// The jose candidate, as a Workers user writes it: `jwtVerify` on the
// X-AgentArea-Context header, then the same `_meta` binding check in
// JavaScript as npm/bench (../../npm/bench/bind.mjs). Two key forms: the
// Uint8Array secret jose's docs show (`?key=bytes`) and a CryptoKey imported
// once (`?key=cryptokey`). GET /?n=N&key=... verifies N times.
import { jwtVerify } from 'jose';

import { bind } from '../../npm/bench/bind.mjs';

let state;

async function setup(env) {
  const secret = new TextEncoder().encode(env.SECRET);
  return {
    keys: {
      bytes: secret,
      cryptokey: await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']),
    },
    options: { algorithms: ['HS256'], issuer: 'agentarea', audience: env.INSTANCE, clockTolerance: 30, maxTokenAge: 600 },
    headers: new Headers(JSON.parse(env.HEADERS)),
    body: new TextEncoder().encode(env.BODY),
  };
}

const decoder = new TextDecoder();

export default {
  async fetch(request, env) {
    state ??= await setup(env);
    const url = new URL(request.url);
    const n = Number(url.searchParams.get('n') ?? 1);
    const key = state.keys[url.searchParams.get('key') ?? 'cryptokey'];
    let context;
    for (let i = 0; i < n; i++) {
      const token = state.headers.get('x-agentarea-context');
      const { payload } = await jwtVerify(token, key, state.options);
      context = bind(payload, JSON.parse(decoder.decode(state.body)));
    }
    return Response.json({ task_id: context?.task_id });
  },
};
