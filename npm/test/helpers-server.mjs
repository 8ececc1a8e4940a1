// One replica of the helpers test server in its own process, sharing an
// idempotency store in Redis (REDIS_URL) with the others. Prints its URL as
// the first line of stdout; stops on SIGTERM.
import { createClient } from 'redis';

import { redisStore } from '../dist/helpers-node.js';
import { helpersServer } from './helpers-fixture.mjs';
import { listen, stop } from './support.mjs';

const redis = createClient({ url: process.env.REDIS_URL });
await redis.connect();
const { http } = helpersServer({ store: redisStore(redis, { prefix: 'toolctx-test:' }) });
const url = await listen(http);
process.stdout.write(`${url}\n`);
process.on('SIGTERM', async () => {
  await stop(http);
  await redis.quit();
  process.exit(0);
});
