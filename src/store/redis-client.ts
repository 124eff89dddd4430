import { Cluster, Redis } from 'ioredis';
import { isReadOnlyRefusal, sendAgainAfterFailover } from './redis-failover.ts';
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
      // Not on a Cluster: ioredis follows a redirect (MOVED, ASK, TRYAGAIN while a slot migrates) for a command sent alone, but fails
      // a batch in which one command was redirected and another, writing, was not: under load, every write of a node's batch
      // failed while one tenant's slot moved, or after it moved until the slot map was read again.
      enableAutoPipelining: false,
      clusterRetryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1_000),
      // Slots move while a cluster reshards: follow MOVED/ASK, and wait out TRYAGAIN (100 ms apart), this many times before failing.
      maxRedirections: 16,
      // Read the slot map again now and then (ioredis does not unless told): after a restart or a failover a stale map can name a
      // node that is a replica now, which refuses writes (READONLY) instead of redirecting them.
      slotsRefreshInterval: 5_000,
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
  // One wait (one listener) for every command waiting at the moment: under load, hundreds wait through a reconnection.
  let wait = readyWaits.get(client);
  if (!wait) {
    wait = new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        readyWaits.delete(client);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      client.on('ready', done);
    });
    readyWaits.set(client, wait);
  }
  return wait;
}

const readyWaits = new WeakMap<RedisClient, Promise<void>>();

/** Runs one command once the client is ready, turning any failure into 503 `store_unavailable`. */
export async function runCommand<T>(client: RedisClient, timeoutMs: number, command: () => Promise<T>): Promise<T> {
  try {
    await whenReady(client, timeoutMs);
    return await sendCommand(client, command);
  } catch (error) {
    throw storeUnavailable(error);
  }
}

/**
 * Sends a command; one a replica refused (`READONLY`: a failover made the
 * server a replica) is sent again where the primary is now: on a Cluster,
 * once, after the slot map has been read afresh (it named a node that has
 * since become a replica); on a single Redis over a new connection
 * (redis-failover.ts). A refused write changed nothing (Redis stops a script
 * at its first write on a replica), so sending it again is safe.
 */
export function sendCommand<T>(client: RedisClient, command: () => Promise<T>): Promise<T> {
  return command().catch(async (error: unknown) => {
    if (!(client instanceof Cluster)) return sendAgainAfterFailover(client, command, error);
    if (!isReadOnlyRefusal(error)) throw error;
    await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
    return command();
  });
}
