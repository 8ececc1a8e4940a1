// One replica of the replay test server in its own process, its replay
// guard's store in Redis (REDIS_URL) shared with the others. Prints its URL
// as the first line of stdout; stops on SIGTERM.
import { createClient } from 'redis';

import { redisReplayStore } from '../dist/index.js';
import { replayServer, replayVerifier } from './replay-fixture.mjs';
import { listen, stop } from './support.mjs';

const redis = createClient({ url: process.env.REDIS_URL });
await redis.connect();
const verifier = replayVerifier({ replayGuard: redisReplayStore(redis, { prefix: 'toolctx-replay-test:' }) });
const { http } = replayServer(verifier);
const url = await listen(http);
process.stdout.write(`${url}\n`);
process.on('SIGTERM', async () => {
  await stop(http);
  await redis.quit();
  process.exit(0);
});
