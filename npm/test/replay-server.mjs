// One replica of the replay test server in its own process, its replay
// guard's store in Redis (REDIS_URL) shared with the others. Prints its URL
// as the first line of stdout; stops on SIGTERM.
import { redisReplayStore } from 'toolctx';
import { replayServer, replayVerifier } from './replay-fixture.mjs';
import { runReplica } from './processes.mjs';

await runReplica((redis) => replayServer(replayVerifier({ replayGuard: redisReplayStore(redis, { prefix: 'toolctx-replay-test:' }) })).http);
