import { Cluster, Redis } from 'ioredis';
import { storeUnavailable } from './response-store.ts';

/** A single Redis or a Redis Cluster: every store speaks to either through the same commands. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /** A single Redis (`redis://`, `rediss://`); ignored when `clusterNodes` is set. */
  url: string;
  /** Seed nodes of a Redis Cluster (URLs); the first one's credentials and TLS apply to every node. */
  clusterNodes?: readonly string[];
  commandTimeoutMs: number;
  connectTimeoutMs?: number;
}

/**
 * One client as every store wants it: commands time out, nothing queues while
 * disconnected (a request fails at once instead of hanging), reconnects by
 * itself with back-off. On a cluster, keys carry hash tags (redis-keys.ts) so
 * each script and multi-key command stays in one slot.
 */
export function connectRedis(options: RedisConnectionOptions): RedisClient {
  const connection = {
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs ?? options.commandTimeoutMs,
    // ioredis's own dead-connection detection: no byte back for this long while a command waits.
    socketTimeout: options.commandTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1_000),
  };
  const nodes = options.clusterNodes ?? [];
  // Commands sent in the same tick (responses ending together, each with its put and its usage) leave in one write: under load that was one system call per command.
  if (nodes.length === 0) return new Redis(options.url, { ...connection, lazyConnect: false, enableAutoPipelining: true });
  const seed = new URL(nodes[0]!);
  return new Cluster(
    nodes.map((node) => {
      const url = new URL(node);
      return { host: url.hostname, port: Number(url.port || 6379) };
    }),
    {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1_000),
      // Slots move while a cluster reshards: follow MOVED/ASK a few times before failing the command.
      maxRedirections: 8,
      redisOptions: {
        ...connection,
        ...(seed.username && { username: decodeURIComponent(seed.username) }),
        ...(seed.password && { password: decodeURIComponent(seed.password) }),
        ...(seed.protocol === 'rediss:' && { tls: {} }),
      },
    },
  );
}

/**
 * A second connection to the same Redis for commands that hold it
 * (`XREAD BLOCK`, `SUBSCRIBE`): with a command timeout of zero, since those
 * wait on purpose.
 */
export function duplicateForBlocking(client: RedisClient): RedisClient {
  if (client instanceof Cluster) {
    return client.duplicate(undefined, { enableOfflineQueue: true, enableAutoPipelining: false, redisOptions: { ...client.options.redisOptions, commandTimeout: undefined, socketTimeout: undefined } });
  }
  return client.duplicate({ commandTimeout: undefined, socketTimeout: undefined, enableOfflineQueue: true, maxRetriesPerRequest: null, enableAutoPipelining: false });
}

/**
 * Waits (at most `timeoutMs`) for a connecting client: with no offline queue,
 * a command sent while (re)connecting would fail at once.
 */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    client.on('ready', done);
  });
}

/** Runs one command once the client is ready, turning any failure into 503 `store_unavailable`. */
export async function runCommand<T>(client: RedisClient, timeoutMs: number, command: () => Promise<T>): Promise<T> {
  try {
    await whenReady(client, timeoutMs);
    return await command();
  } catch (error) {
    throw storeUnavailable(error);
  }
}
