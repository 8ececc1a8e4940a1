// The request both benchmarks verify (npm/bench/bench.mjs in Node,
// bench/edge/bench.mjs inside workerd): a ~1 KB tools/call body and a
// ~800-character token, minted here by hand with node:crypto.
import { createHmac } from 'node:crypto';

export const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
export const INSTANCE = '0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f';

export const context = {
  protocol: '1',
  task_id: '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b',
  tool_call_id: 'call_abc123def456',
  workspace_id: '1b2e3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  agent_id: '9d4a1b2c-3d4e-4f5a-9b7c-8d9e0f1a2b3c',
  end_user_id: 'user-42@example.com',
  metadata: { chatId: 'c-9f8e7d6c', channel: 'web', locale: 'en-GB', plan: 'team' },
};
context.idempotency_key = `${context.task_id}:${context.tool_call_id}`;

const b64url = (s) => Buffer.from(s).toString('base64url');

/** The context token issued at `now` (Unix seconds): HS256 compact JWS by hand. */
export function mintToken(now) {
  const claims = {
    iss: 'agentarea',
    aud: INSTANCE,
    iat: now,
    exp: now + 300,
    jti: 'd884cf0d-a58b-42f5-8207-175189c6a9ba',
    tool: 'get_order',
    ...context,
  };
  const signed = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${signed}.${createHmac('sha256', SECRET).update(signed).digest('base64url')}`;
}

/** The tools/call body as JSON text; its `_meta` holds a progressToken and the context claims `names`, in that order. */
export function callBody(names = Object.keys(context)) {
  const meta = { progressToken: 17 };
  for (const k of names) meta[`agentarea/${k}`] = context[k];
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 17,
    method: 'tools/call',
    params: {
      name: 'get_order',
      arguments: { orderId: 'A-17', include: ['lines', 'shipping', 'payments'], note: 'x'.repeat(340) },
      _meta: meta,
    },
  });
}
