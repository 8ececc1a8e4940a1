// The soak's server (tests/hostile/soak.mjs), forked with an IPC channel: an
// MCP SDK v2 server (toNodeHandler(createMcpHandler) on node:http, behind
// the toolctx middleware) whose replay guard is the in-memory one
// (`memoryReplayStore`, SOAK_REPLAY_CAPACITY live token ids) and whose tool
// `charge` is `idempotent` over the in-memory LRU (`memoryIdempotencyStore`,
// SOAK_IDEM_ENTRIES entries), both sized so that a run at saturation fills
// them. Prints its URL as the first line of stdout; answers the message
// 'memory' with process.memoryUsage(), the tool's runs and the idempotency
// store's size; stops on SIGTERM.
import { z } from 'zod';

import { memoryReplayStore } from 'toolctx';
import { idempotent, jsonResult, memoryIdempotencyStore } from 'toolctx/helpers';
import { replayVerifier } from './replay-fixture.mjs';
import { cellById, nodeServerOf } from './sdks.mjs';
import { listen, stop } from './support.mjs';

const store = memoryIdempotencyStore({ maxEntries: Number(process.env.SOAK_IDEM_ENTRIES ?? 10000) });
const seen = { runs: 0 };
const charge = idempotent(
  async ({ orderId }) => {
    seen.runs += 1;
    return jsonResult({ orderId, run: seen.runs });
  },
  { store },
);
const spec = {
  verifier: replayVerifier({ replayGuard: memoryReplayStore({ capacity: Number(process.env.SOAK_REPLAY_CAPACITY ?? 20000) }) }),
  name: 'toolctx-soak',
  tools: [{ name: 'charge', shape: { orderId: z.string() }, handler: charge }],
  seen,
};
const { http } = nodeServerOf(cellById('v2-handler-node:v1'), spec);
const url = await listen(http);
process.stdout.write(`${url}\n`);
process.on('message', (m) => {
  if (m === 'memory') process.send({ memory: process.memoryUsage(), runs: seen.runs, idempotencyEntries: store.size });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', async () => {
  await stop(http);
  process.exit(0);
});
