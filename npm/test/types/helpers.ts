// Type-level test of toolctx/helpers with the real SDK types: compiled with
// `tsc -p test/types/tsconfig.helpers.json` against the BUILT declarations.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createClient } from 'redis';
import { z } from 'zod';

import {
  cancellable,
  checkResult,
  idempotent,
  jsonResult,
  memoryIdempotencyStore,
  noticeCancelled,
  progress,
  redisIdempotencyStore,
  textResult,
  withLimits,
  type IdempotencyStore,
  type LimitFinding,
  type ToolResult,
} from 'toolctx/helpers';

const server = new McpServer({ name: 'types', version: '1.0.0' });

// The wrappers keep the SDK's argument and extra types, and their results are CallToolResults.
const charge = cancellable(
  idempotent(
    async ({ orderId, amount }: { orderId: string; amount: number }, extra) => {
      const report = progress(extra);
      await report(1, 2, 'charging');
      const signal: AbortSignal | undefined = extra.signal;
      void signal;
      return jsonResult({ orderId, amount, ok: true });
    },
    { store: memoryIdempotencyStore({ maxEntries: 100 }), waitMs: 5000 },
  ),
  { timeoutMs: 60_000 },
);
server.registerTool('charge', { inputSchema: { orderId: z.string(), amount: z.number() } }, charge);

server.registerTool(
  'search',
  { inputSchema: { q: z.string() } },
  withLimits(async ({ q }, extra) => {
    void progress(extra)(1, 1);
    return textResult(`results for ${q}`);
  }),
);

// Typed structured results.
const typed: ToolResult<{ orderId: string }> = jsonResult({ orderId: 'A' });
const id: string | undefined = typed.structuredContent?.orderId;
void id;
// @ts-expect-error the structured content has no such member
void typed.structuredContent?.missing;

const findings: LimitFinding[] = checkResult(typed);
for (const f of findings) {
  switch (f.code) {
    case 'text_offloaded':
    case 'structured_dropped':
    case 'image_type':
    case 'image_too_large':
    case 'too_many_images':
      break;
    default: {
      const never: never = f.code;
      void never;
    }
  }
}

// Stores: node-redis v4+ as it is, or any sender.
const redis = createClient();
const shared: IdempotencyStore = redisIdempotencyStore(redis);
const viaFunction: IdempotencyStore = redisIdempotencyStore(async (args: string[]) => args.length);
void [shared, viaFunction];

// The cancellation hook takes Node's headers or fetch Headers.
declare const body: unknown;
noticeCancelled(body, { 'x-agentarea-context': 'a.b.c' });
noticeCancelled(body, new Headers());

// Contextual typing reaches through the wrappers: a result that is no
// CallToolResult, or an argument the schema lacks, is an error.
// @ts-expect-error no `content`
server.registerTool('bad', { inputSchema: { q: z.string() } }, idempotent(async ({ q }) => ({ foo: q })));
// @ts-expect-error no such argument
server.registerTool('bad2', { inputSchema: { q: z.string() } }, cancellable(async ({ nope }) => textResult(String(nope))));
