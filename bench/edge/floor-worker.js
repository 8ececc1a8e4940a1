// The floor: an HS256 check written by hand on WebCrypto (workerd's native
// HMAC), with the same claim checks and `_meta` binding as the jose
// candidate, and none of the strictness toolctx adds (duplicate members,
// canonical base64url, header rules). The physical lower bound in JavaScript,
// as npm/bench's node:crypto floor is in Node. GET /?n=N verifies N times.
import { bind } from '../../npm/bench/bind.mjs';

let state;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function fromB64url(s) {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function setup(env) {
  return {
    key: await crypto.subtle.importKey('raw', encoder.encode(env.SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']),
    instance: env.INSTANCE,
    headers: new Headers(JSON.parse(env.HEADERS)),
    body: encoder.encode(env.BODY),
  };
}

async function verify(token, now) {
  const [head, payload, sig, extra] = token.split('.');
  if (sig === undefined || extra !== undefined) throw new Error('token_malformed');
  if (!(await crypto.subtle.verify('HMAC', state.key, fromB64url(sig), encoder.encode(`${head}.${payload}`)))) throw new Error('signature_invalid');
  if (JSON.parse(decoder.decode(fromB64url(head))).alg !== 'HS256') throw new Error('alg_not_allowed');
  const p = JSON.parse(decoder.decode(fromB64url(payload)));
  if (p.iss !== 'agentarea' || p.aud !== state.instance) throw new Error('claims');
  if (!Number.isInteger(p.iat) || !Number.isInteger(p.exp)) throw new Error('claim_invalid');
  if (now >= p.exp + 30 || p.iat > now + 30 || now - p.iat > 630) throw new Error('times');
  return p;
}

export default {
  async fetch(request, env) {
    state ??= await setup(env);
    const n = Number(new URL(request.url).searchParams.get('n') ?? 1);
    let context;
    for (let i = 0; i < n; i++) {
      const payload = await verify(state.headers.get('x-agentarea-context'), Math.floor(Date.now() / 1000));
      context = bind(payload, JSON.parse(decoder.decode(state.body)));
    }
    return Response.json({ task_id: context?.task_id });
  },
};
