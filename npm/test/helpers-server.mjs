// One replica of the helpers test server in its own process, sharing an
// idempotency store in Redis (REDIS_URL) with the others, wired as the cell
// TOOLCTX_CELL of sdks.mjs (a node:http one). Prints its URL as the first
// line of stdout; stops on SIGTERM.
import { redisIdempotencyStore } from 'toolctx/helpers';
import { helpersApp } from './helpers-fixture.mjs';
import { runReplica } from './processes.mjs';
import { cellById, nodeServerOf } from './sdks.mjs';

const cell = cellById(process.env.TOOLCTX_CELL);
await runReplica((redis) => nodeServerOf(cell, helpersApp(cell, { store: redisIdempotencyStore(redis, { prefix: 'toolctx-test:' }) }).spec).http);
