import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/**
 * A real Redis for tests, found in this order: `REDIS_URL`; a container when
 * a Docker engine answers (testcontainers); a `redis-server` binary started on
 * a free port. Never skipped: with none of them the run fails and says how to
 * get one. Each caller gets its own key prefix and removes only its own keys.
 */
export interface TestRedis {
  url: string;
  /** A fresh prefix for one test's keys. */
  prefix(): string;
  /** Deletes every key under the prefixes handed out, nothing else. */
  cleanup(): Promise<void>;
  stop(): Promise<void>;
}

export async function acquireRedis(): Promise<TestRedis> {
  const { url, stop } = await locateRedis();
  const prefixes: string[] = [];
  return {
    url,
    prefix() {
      const prefix = `loopgate-test:${randomUUID()}:`;
      prefixes.push(prefix);
      return prefix;
    },
    async cleanup() {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      for (const prefix of prefixes.splice(0)) {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) await client.del(...keys);
        } while (cursor !== '0');
      }
      client.disconnect();
    },
    stop,
  };
}

async function locateRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  if (dockerEngineLikely()) {
    try {
      const { GenericContainer } = await import('testcontainers');
      const container = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
      return { url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`, stop: async () => void (await container.stop()) };
    } catch {
      // No usable engine after all; fall through to a local binary.
    }
  }
  if (spawnSync('redis-server', ['--version']).status === 0) {
    const server = await startRedisServer();
    return { url: server.url, stop: server.stop };
  }
  throw new Error('No Redis for the tests: set REDIS_URL, run a Docker engine, or install redis-server (Debian: apt-get install redis-server).');
}

function dockerEngineLikely(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/** Starts a throwaway `redis-server` (no persistence) on a free loopback port, optionally requiring a password. */
export async function startRedisServer(port?: number, password?: string): Promise<{ url: string; port: number; process: ChildProcess; stop: () => Promise<void> }> {
  const chosen = port ?? (await freePort());
  // A directory of its own: a replica writes the snapshot it syncs from its primary to disk, whatever `--save` says.
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-redis-'));
  const child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...(password ? ['--requirepass', password] : [])], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${chosen}`;
  const probe = new Redis(password ? `redis://:${password}@127.0.0.1:${chosen}` : url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  probe.disconnect();
  return {
    url,
    port: chosen,
    process: child,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** An ACL user of the Redis at `url` with `rules` (a managed service's restricted user): its URL, a way to change its rules, and its removal. */
export async function restrictedRedisUser(url: string, rules: string[]): Promise<{ url: string; setRules(...more: string[]): Promise<void>; remove(): Promise<void> }> {
  const admin = new Redis(url);
  const user = `loopgate-restricted-${randomUUID()}`;
  await admin.acl('SETUSER', user, 'on', '>pw', ...rules);
  const userUrl = new URL(url);
  userUrl.username = user;
  userUrl.password = 'pw';
  return {
    url: userUrl.toString(),
    setRules: async (...more) => void (await admin.acl('SETUSER', user, ...more)),
    remove: async () => {
      await admin.acl('DELUSER', user);
      admin.disconnect();
    },
  };
}
