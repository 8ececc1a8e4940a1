// Child processes for the tests that need several: a free port of
// 127.0.0.1, a child started and awaited until it prints that it is ready,
// stopped again, and Debian's redis-server on its own free port.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

import { listen, stop } from './support.mjs';

/** Whether `redis-server` is on PATH. */
export const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedis && process.env.TOOLCTX_REQUIRE_REDIS === '1') throw new Error('redis-server is not on PATH');

// A free port of 127.0.0.1, for a server started on it afterwards: the
// one picker of the Node tests. The kernel picks (port 0) unless
// TOOLCTX_TEST_PORTS ("LOW-HIGH") gives this lane of scripts/test its own
// range outside the kernel's ephemeral one (tests/support/ports.py, the
// same for Python): a port then never collides with the other lane's nor
// with one the kernel hands out. Each port is checked by listening on it
// (exclusive); the walk starts at a random point of the range.
const portRange = (() => {
  const spec = (process.env.TOOLCTX_TEST_PORTS ?? '').trim();
  if (spec === '') return undefined;
  const [low, high] = spec.split('-').map(Number);
  if (!(Number.isInteger(low) && Number.isInteger(high) && low >= 1024 && low <= high && high <= 65535)) {
    throw new Error(`TOOLCTX_TEST_PORTS must be LOW-HIGH within 1024-65535, got ${spec}`);
  }
  return { low, size: high - low + 1, cursor: Math.floor(Math.random() * (high - low + 1)) };
})();

function probePort(port) {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: bound } = probe.address();
      probe.close(() => resolve(bound));
    });
  });
}

export async function freePort() {
  if (portRange === undefined) return probePort(0);
  for (let i = 0; i < portRange.size; i++) {
    const port = portRange.low + (portRange.cursor++ % portRange.size);
    try {
      return await probePort(port);
    } catch {
      // taken: the next one
    }
  }
  throw new Error(`no free port in TOOLCTX_TEST_PORTS=${process.env.TOOLCTX_TEST_PORTS}`);
}

/** Starts a child and resolves with it once its stdout printed `ready` (a line matching it). */
export async function startChild(command, args, ready, env = process.env) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${command} exited with ${code} before it was ready`);
  });
  const line = await Promise.race([
    (async () => {
      for await (const l of lines) if (ready.test(l)) return l;
      throw new Error(`${command} closed its stdout before it was ready`);
    })(),
    exited,
  ]);
  exited.catch(() => undefined);
  lines.on('line', () => undefined); // keep draining
  return { child, line };
}

export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  await exit;
}

/** redis-server on a free port of 127.0.0.1, no persistence; resolves to `{ child, url }`. */
export async function startRedis() {
  const port = await freePort();
  const { child } = await startChild(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'notice'],
    /Ready to accept connections/,
  );
  return { child, url: `redis://127.0.0.1:${port}` };
}

/**
 * redis-server and `count` copies of the Node program `server` sharing it
 * (REDIS_URL, and `env` added to the environment), each awaited until it
 * prints its URL, and a plain client of that Redis. `start()` resolves to
 * `{ redisUrl, client, replicas }`, each replica `{ child, url }`; `stop()`
 * stops whatever started, even halfway.
 */
export function redisReplicas(server, { env = {}, count = 2 } = {}) {
  let redis;
  let client;
  const replicas = [];
  return {
    async start() {
      const { createClient } = await import('redis');
      let redisUrl;
      ({ child: redis, url: redisUrl } = await startRedis());
      client = createClient({ url: redisUrl });
      await client.connect();
      for (let i = 0; i < count; i++) {
        const { child, line } = await startChild(process.execPath, [server], /^http:\/\//, {
          ...process.env,
          ...env,
          REDIS_URL: redisUrl,
        });
        replicas.push({ child, url: line.trim() });
      }
      return { redisUrl, client, replicas };
    },
    async stop() {
      for (const r of replicas) await stopChild(r.child);
      await client?.quit();
      if (redis) await stopChild(redis);
    },
  };
}

/**
 * The body of one replica's own process: a client of the Redis at
 * REDIS_URL, handed to `serverWith` for the node:http server to run. Prints
 * the server's URL as the first line of stdout; stops on SIGTERM.
 */
export async function runReplica(serverWith) {
  const { createClient } = await import('redis');
  const redis = createClient({ url: process.env.REDIS_URL });
  // Without an 'error' listener node-redis takes the replica down when Redis goes away.
  redis.on('error', (e) => process.stderr.write(`redis: ${e.message}\n`));
  await redis.connect();
  const http = serverWith(redis);
  const url = await listen(http);
  process.stdout.write(`${url}\n`);
  process.on('SIGTERM', async () => {
    await stop(http);
    await redis.quit();
    process.exit(0);
  });
}
