// One replica of the helpers test server in its own process, sharing an
// idempotency store in Redis (REDIS_URL) with the others. Prints its URL as
// the first line of stdout; stops on SIGTERM.
import { redisStore } from 'toolctx/helpers';
import { helpersServer } from './helpers-fixture.mjs';
import { runReplica } from './processes.mjs';

await runReplica((redis) => helpersServer({ store: redisStore(redis, { prefix: 'toolctx-test:' }) }).http);
