// The `_meta` binding check a user would write in JavaScript once a JWT
// library has verified the token's claims: the same for every candidate
// that is not toolctx, in Node (bench.mjs) and in workerd (bench/edge).
// No Node built-ins.

export const CONTEXT_CLAIMS = ['protocol', 'task_id', 'tool_call_id', 'workspace_id', 'idempotency_key', 'agent_id', 'end_user_id', 'metadata'];

export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}
export function bind(payload, request) {
  if (request.method !== 'tools/call' || typeof request.params?.name !== 'string') throw new Error('not a tools/call');
  const m = request.params._meta ?? {};
  for (const k of Object.keys(m)) {
    if (k.startsWith('agentarea/')) {
      const name = k.slice(10);
      if (!(name in payload) || !jsonEqual(payload[name], m[k])) throw new Error(`meta_mismatch ${name}`);
    }
  }
  for (const name of CONTEXT_CLAIMS) {
    if (name in payload && !(`agentarea/${name}` in m)) throw new Error(`meta_missing ${name}`);
  }
  if (payload.tool !== undefined && payload.tool !== request.params.name) throw new Error('tool_mismatch');
  if (payload.idempotency_key !== `${payload.task_id}:${payload.tool_call_id}`) throw new Error('context_malformed');
  return payload;
}
