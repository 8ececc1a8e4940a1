// One process of the fault-injection server (faults.test.mjs): an MCP SDK v2
// server (toNodeHandler(createMcpHandler) on node:http, behind the toolctx
// middleware) whose one tool, `charge`, is `idempotent` with `redisIdempotencyStore` on
// the Redis at REDIS_URL, and whose replay guard is `redisReplayStore` on
// the same Redis (REPLAY_STORE=redis, the default) or the in-memory one
// (REPLAY_STORE=memory: so that a Redis failure reaches the idempotency
// store instead of refusing the call first). The Redis client fails fast
// instead of queueing: commands are refused while it reconnects
// (`disableOfflineQueue`), and the stores fail a command without a reply
// after REDIS_COMMAND_MS (a paused Redis: their `timeoutMs`); it
// reconnects every 100 ms. LEASE_MS is the
// idempotency claim's lease. `GET /runs` answers how often the tool ran
// in this process. Prints its URL as the first line of stdout; stops on
// SIGTERM.
import { createClient } from 'redis';
import { z } from 'zod';

import { memoryReplayStore, redisReplayStore } from 'toolctx';
import { idempotent, jsonResult, redisIdempotencyStore } from 'toolctx/helpers';
import { replayVerifier } from './replay-fixture.mjs';
import { cellById, nodeServerOf } from './sdks.mjs';
import { listen, stop } from './support.mjs';

const commandMs = Number(process.env.REDIS_COMMAND_MS ?? 500);
const redis = createClient({
  url: process.env.REDIS_URL,
  disableOfflineQueue: true,
  socket: { reconnectStrategy: 100, connectTimeout: 1000 },
});
// A client without an 'error' listener takes the process down when Redis goes away.
redis.on('error', () => undefined);
await redis.connect();
const seen = { runs: 0 };
const charge = idempotent(
  async ({ orderId, delayMs }) => {
    seen.runs += 1;
    const run = seen.runs;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return jsonResult({ orderId, pid: process.pid, run });
  },
  {
    store: redisIdempotencyStore(redis, { prefix: 'toolctx-faults:idem:', timeoutMs: commandMs }),
    waitMs: 5000,
    leaseMs: Number(process.env.LEASE_MS ?? 3000),
    onStoreError: () => undefined,
  },
);
const spec = {
  verifier: replayVerifier({
    replayGuard: process.env.REPLAY_STORE === 'memory' ? memoryReplayStore() : redisReplayStore(redis, { prefix: 'toolctx-faults:jti:', timeoutMs: commandMs }),
  }),
  name: 'toolctx-faults',
  tools: [{ name: 'charge', shape: { orderId: z.string(), delayMs: z.number().optional() }, handler: charge }],
  seen,
};
const { http } = nodeServerOf(cellById('v2-handler-node:v1'), spec);
const url = await listen(http);
process.stdout.write(`${url}\n`);
process.on('SIGTERM', async () => {
  await stop(http);
  await redis.quit().catch(() => undefined);
  process.exit(0);
});
