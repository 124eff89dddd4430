import { createServer } from 'node:net';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis.ts';

/** A throwaway three-master Redis Cluster on loopback, for tests. */
export interface TestRedisCluster {
  /** `redis://127.0.0.1:<port>` of each master. */
  nodes: string[];
  /** Stops the node at `index` (SIGKILL): its slots stay unserved (no replicas). */
  killNode(index: number): Promise<void>;
  /** Stops every node and removes the temporary directory. */
  stop(): Promise<void>;
}

const MISSING =
  'Redis Cluster tests need the redis-server and redis-cli binaries (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis).';

/**
 * Starts three `redis-server` masters with cluster mode on free loopback
 * ports, joins them with `redis-cli --cluster create` (no replicas) and waits
 * until every node reports `cluster_state:ok`. Never skipped: without the
 * binaries it throws and says how to get them.
 */
export async function startRedisCluster(): Promise<TestRedisCluster> {
  for (const binary of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(binary, ['--version']);
    if (probe.error || probe.status !== 0) throw new Error(`${MISSING} (${binary} --version failed: ${probe.error?.message ?? `exit ${probe.status}`})`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'loopgate-redis-cluster-'));
  const children: ChildProcess[] = [];
  const stopChild = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  const stop = async () => {
    await Promise.all(children.map(stopChild));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports = await distinctFreePorts(3);
    for (const port of ports) {
      const output: string[] = [];
      const child = spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout', '2000',
          '--save', '',
          '--appendonly', 'no',
          '--dir', dir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      children.push(child);
      await waitForPing(port, child, output);
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (exit ${create.status}): ${create.stdout}${create.stderr}`);
    await Promise.all(ports.map((port) => waitForClusterOk(port)));
    return {
      nodes: ports.map((port) => `redis://127.0.0.1:${port}`),
      killNode: (index) => stopChild(children[index]!),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  // A cluster node also listens on its port + 10000 (the bus port): keep that within range, and free too
  // (an ephemeral port another test's socket holds made a node exit with "Address already in use").
  while (ports.size < count) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && !ports.has(port + 10_000) && !ports.has(port - 10_000) && (await portIsFree(port + 10_000))) ports.add(port);
  }
  return [...ports];
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function waitForPing(port: number, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}: ${output.join('')}`);
    const client = probeClient(port);
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within 10 s: ${(error as Error).message}; ${output.join('')}`);
    } finally {
      client.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitForClusterOk(port: number): Promise<void> {
  const client = probeClient(port);
  try {
    await client.connect();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const info = String(await client.call('CLUSTER', 'INFO'));
      if (/cluster_state:ok/.test(info)) return;
      if (Date.now() > deadline) throw new Error(`Redis Cluster node on port ${port} not ok within 30 s:\n${info}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.disconnect();
  }
}

function probeClient(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  return client;
}
