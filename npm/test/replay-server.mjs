// One replica of the replay test server in its own process, its replay
// guard's store in Redis (REDIS_URL) shared with the others, wired as the
// cell TOOLCTX_CELL of sdks.mjs (a node:http one). Prints its URL as the
// first line of stdout; stops on SIGTERM.
import { redisReplayStore } from 'toolctx';
import { replayApp, replayVerifier } from './replay-fixture.mjs';
import { runReplica } from './processes.mjs';
import { cellById, nodeServerOf } from './sdks.mjs';

const cell = cellById(process.env.TOOLCTX_CELL);
await runReplica((redis) => nodeServerOf(cell, replayApp(replayVerifier({ replayGuard: redisReplayStore(redis, { prefix: 'toolctx-replay-test:' }) })).spec).http);
