import { Cluster } from 'ioredis';
import { connectRedis, sendCommand, type RedisClient } from './redis-client.ts';
import { reconnectingAfterRefusal } from './redis-failover.ts';
import { RedisKeys } from './redis-keys.ts';
import type { ConversationTurn, ResponseStore, StoreHealth, StoredItem, StoredResponse } from './response-store.ts';
import { CHAIN_READ_DEPTH, keptForSeconds, storeRefusesCommands, storeUnavailable } from './response-store.ts';
import { storedRecordParts } from './stored-record-json.ts';
import { CHAIN_SCRIPT, DELETE_SCRIPT, indexedItem, itemsField, PUT_SCRIPT } from './redis-response-scripts.ts';
import { ConnectionEventsLog, connectionFailureReason, type ConnectionFailureReason, type StoreLogger } from './connection-events-log.ts';
import { maskUrl } from '../config/mask-secrets.ts';

export interface RedisStoreOptions {
  /** A single Redis; ignored when `clusterNodes` is set. */
  url: string;
  /** Seed nodes of a Redis Cluster (URLs): when set, the store runs on the cluster. */
  clusterNodes?: readonly string[];
  keyPrefix: string;
  ttlSeconds: number;
  /** The longest a response may run: a running one's record is kept this much longer (keptForSeconds). */
  longestRunSeconds?: number;
  /**
   * Longest a single command may take before it fails (the gateway never waits on Redis longer);
   * a connection on which nothing arrives for this long while a command waits is dropped and redialled.
   */
  commandTimeoutMs: number;
  /** Longest one connection attempt (TCP and TLS) may take; defaults to the command timeout. */
  connectTimeoutMs?: number;
  /** Where connection problems and recoveries are reported. */
  log?: StoreLogger;
}

interface ChainCommands {
  loopgatePut(...keysThenArgs: (string | number)[]): Promise<number>;
  loopgateChain(firstKey: string, prefix: string, id: string, limit: number): Promise<[string[], string | null]>;
  loopgateDelete(key: string, itemPrefix: string, id: string, responsePrefix: string, holderPrefix: string): Promise<number>;
}

/** The readiness probe: a write from a script, as the store's own writes are, taken back at once (nothing of it stays). */
const PROBE_SCRIPT = `redis.call('SET', KEYS[1], '1', 'PX', 60000) redis.call('DEL', KEYS[1]) return 1`;

/** How long the store may go unasked before a readiness check asks it (in the background) whether it still answers. */
const QUIET_PROBE_MS = 1_000;

/**
 * Responses in Redis (a single server or a Redis Cluster), shared by every
 * replica. Keys (redis-keys.ts) and what is in them: redis-response-scripts.ts.
 * Everything expires after the TTL. A tenant's keys share the `{t:<tenant>}`
 * hash tag, so every script touches one slot and is routed by its first key.
 *
 * Faults: commands time out, nothing queues while disconnected (a request
 * fails at once instead of hanging), and the client reconnects by itself. A
 * Redis that stops answering on an open connection (hung, black-holed) gets
 * the connection dropped after one command timeout of silence, so it shows as
 * down (logged, in `/readyz`, refused before a model call) instead of
 * failing each request only after its model call.
 */
export class RedisResponseStore implements ResponseStore {
  readonly kind = 'redis';
  readonly redis: RedisClient & ChainCommands;
  readonly #options: RedisStoreOptions;
  readonly #keys: RedisKeys;
  /** Turns the client's connection events into log lines (none without a logger). */
  readonly #connectionEvents: ConnectionEventsLog | null;
  #readyWait: Promise<void> | null = null;
  /** Why the last connection attempt failed; null once connected. */
  #lastFailure: ConnectionFailureReason | null = null;
  /**
   * Why the last command failed, while no command has succeeded since: a
   * connection can stay `ready` while commands fail (a Cluster whose slots
   * a hung master and replica hold, a server that stopped answering).
   */
  #commandsFailing: ConnectionFailureReason | null = null;
  /**
   * Redis refused a write of the store's, for want of a permission (NOPERM)
   * or because the server is a replica (READONLY, on a connection made again
   * after the refusal: the URL names a replica): stored requests are refused
   * before their model call until the probe's write, made as the store's
   * writes are, goes through. Another command that succeeds (a read, which a
   * replica answers too) says nothing of it.
   */
  #writesRefused: 'permission_denied' | 'read_only_replica' | null = null;
  #probing = false;
  /** When a command last got its answer (`performance.now()`). */
  #answeredAt = 0;

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#keys = new RedisKeys(options.keyPrefix);
    const clusterNodes = options.clusterNodes ?? [];
    this.redis = connectRedis({
      url: options.url,
      ...(clusterNodes.length > 0 && { clusterNodes }),
      commandTimeoutMs: options.commandTimeoutMs,
      ...(options.connectTimeoutMs !== undefined && { connectTimeoutMs: options.connectTimeoutMs }),
    }) as RedisClient & ChainCommands;
    // Errors surface on the commands that hit them; the connection's own story is logged, rate-limited.
    // (Without an error listener, ioredis would print each reconnect failure to the console.)
    const where = clusterNodes.length > 0 ? { redis_cluster: clusterNodes.map(maskUrl) } : { redis: maskUrl(options.url) };
    const events = options.log ? new ConnectionEventsLog(options.log, where) : null;
    this.#connectionEvents = events;
    this.redis.on('error', (error: Error) => {
      // A cluster that reaches no node says so in general terms; the last node's error says why.
      const cause = (error as { lastNodeError?: Error }).lastNodeError ?? error;
      this.#lastFailure = connectionFailureReason(cause);
      events?.failed(cause);
    });
    if (this.redis instanceof Cluster) {
      // One node's failure (the cluster may stay ready): remembered as the reason should the cluster go down.
      this.redis.on('node error', (error: Error) => {
        this.#lastFailure = connectionFailureReason(error);
      });
    }
    this.redis.on('ready', () => {
      this.#lastFailure = null;
      events?.ready();
      // Asked at once whether the store's commands are allowed: a user without them is found before a request spends a model call.
      this.#probe();
    });
    // Closed by the gateway itself to follow a failover (redis-failover.ts): no outage to report, nor a recovery after it.
    this.redis.on('close', () => {
      if (!(this.redis instanceof Cluster) && reconnectingAfterRefusal(this.redis)) return;
      events?.lost();
    });
    this.redis.defineCommand('loopgatePut', { lua: PUT_SCRIPT });
    this.redis.defineCommand('loopgateChain', { numberOfKeys: 1, lua: CHAIN_SCRIPT });
    this.redis.defineCommand('loopgateDelete', { numberOfKeys: 1, lua: DELETE_SCRIPT });
  }

  async put(record: StoredResponse): Promise<void> {
    const { tenant, response } = record;
    const parts = storedRecordParts(record);
    const ids: string[] = [];
    for (const items of [record.inputItems, response.output]) for (const item of items) ids.push(item.id);
    const keys = [this.#keys.response(tenant, response.id), ...ids.map((id) => this.#keys.item(tenant, id)), ...ids.map((id) => this.#keys.itemHolder(tenant, id))];
    const idsJson = JSON.stringify(ids);
    const args = [keptForSeconds(response, this.#options.ttlSeconds, this.#options.longestRunSeconds ?? 0), parts.record, parts.turn, record.previousResponseId ?? '', idsJson, response.id, itemsField(ids, idsJson), ...parts.items];
    await this.#run(() => this.redis.loopgatePut(keys.length, ...keys, ...args));
  }

  async get(tenant: string, id: string): Promise<StoredResponse | null> {
    const data = await this.#run(() => this.redis.hget(this.#keys.response(tenant, id), 'data'));
    return data ? (JSON.parse(data) as StoredResponse) : null;
  }

  /**
   * Walks the chain in one script. On a Cluster a script reads the keys it
   * did not declare on its own node only, so while the tenant's slot is
   * being resharded an older response may be on the other node: the walk
   * goes on from the one it did not find, as a script of its own (which
   * Redis routes to wherever that key is). Only a response that is not
   * where its own script looks is missing.
   */
  async chain(tenant: string, id: string): Promise<{ turns: ConversationTurn[]; missing: string | null }> {
    const prefix = this.#keys.responsePrefix(tenant);
    const newestFirst: string[] = [];
    let from = id;
    let missing: string | null = null;
    while (newestFirst.length < CHAIN_READ_DEPTH) {
      const start = from;
      const [read, notFound] = await this.#run(() => this.redis.loopgateChain(this.#keys.response(tenant, start), prefix, start, CHAIN_READ_DEPTH - newestFirst.length));
      newestFirst.push(...read);
      missing = notFound || null;
      if (missing === null || missing === start || !(this.redis instanceof Cluster)) break;
      from = missing;
    }
    return { turns: newestFirst.map((turn) => JSON.parse(turn) as ConversationTurn).reverse(), missing };
  }

  async items(tenant: string, ids: string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (ids.length === 0) return found;
    const values = await this.#run(() => this.redis.mget(ids.map((id) => this.#keys.item(tenant, id))));
    values.forEach((value, index) => {
      if (value) found.set(ids[index]!, JSON.parse(indexedItem(value)) as StoredItem);
    });
    return found;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    const deleted = await this.#run(() => this.redis.loopgateDelete(this.#keys.response(tenant, id), this.#keys.itemPrefix(tenant), id, this.#keys.responsePrefix(tenant), this.#keys.itemHolderPrefix(tenant)));
    return deleted === 1;
  }

  /** A single Redis and a Cluster alike: `status` is 'ready' once commands can be sent (a Cluster: once it knows its slots), unless they are not allowed. */
  isReady(): boolean {
    return this.redis.status === 'ready' && this.#writesRefused === null;
  }

  health(): StoreHealth {
    // Between connections (one made again to follow a failover, one still a replica's), the refusal is still the reason.
    if (this.redis.status !== 'ready') return { state: 'unavailable', reason: this.#lastFailure ?? this.#writesRefused ?? 'connecting' };
    if (this.#writesRefused !== null) {
      this.#probe();
      return { state: 'unavailable', reason: this.#writesRefused };
    }
    if (this.#commandsFailing === null) {
      // Nothing answered lately (no traffic): asked in the background, so a store that stopped answering shows here
      // within a probe or two, not only once a client's request has failed on it.
      if (performance.now() - this.#answeredAt > QUIET_PROBE_MS) this.#probe();
      return { state: 'ready' };
    }
    // Asked again in the background, so a replica taken out of traffic for it comes back without a request to find out.
    this.#probe();
    return { state: 'unavailable', reason: this.#commandsFailing };
  }

  /**
   * What the store needs, asked: a write of a key under the gateway's prefix
   * from a script, as every write of the store's is (a user without
   * `+@scripting`, `+@write` or the prefix's keys answers a PING all the
   * same), and on a Cluster its own state (`CLUSTER INFO`).
   */
  #probe(): void {
    if (this.#probing) return;
    this.#probing = true;
    const redis = this.redis;
    const check = async (): Promise<unknown> => {
      // At `maxmemory` (noeviction) the write is refused, Redis answering: ready as before, so that reads and `store: false` go on (every replica shares the Redis).
      const written = await redis.eval(PROBE_SCRIPT, 1, this.#keys.probe()).catch((error: unknown) => {
        if (error instanceof Error && /^OOM\b/.test(error.message)) return 'full';
        throw error;
      });
      this.#writesRefused = null;
      if (!(redis instanceof Cluster)) return written;
      const info = (await redis.cluster('INFO')) as string;
      if (!/cluster_state:ok/.test(info)) throw new Error('the cluster reports cluster_state:fail');
      return info;
    };
    void this.#run(check).then(
      () => {},
      () => {},
    ).finally(() => (this.#probing = false));
  }

  async ensureWritable(): Promise<void> {
    if (this.#writesRefused !== null) {
      // Asked again, so that a user given the permission, or a URL that reaches the primary again, is served without a restart.
      this.#probe();
      // A replica may be one for a failover's moment: that is worth the client's retry, a missing permission is not.
      if (this.#writesRefused === 'read_only_replica') throw storeUnavailable(new Error('Redis answered READONLY'));
      throw storeRefusesCommands(new Error('Redis answered NOPERM'));
    }
    if (this.redis.status === 'ready') return;
    await this.#whenReady();
    // Re-read after the wait: the status changed meanwhile (TypeScript narrowed it before the await).
    const status: string = this.redis.status;
    if (status !== 'ready') throw storeUnavailable(new Error(`Redis is ${status}`));
  }

  async close(): Promise<void> {
    // Its own close: no outage to report.
    this.#connectionEvents?.closing();
    this.redis.disconnect();
  }

  /**
   * While (re)connecting, commands fail at once (no offline queue), so a
   * command first waits for the connection — at most one command timeout,
   * shared by every request waiting at that moment.
   */
  #whenReady(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    this.#readyWait ??= new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        this.#readyWait = null;
        resolve();
      };
      const timer = setTimeout(done, this.#options.commandTimeoutMs);
      this.redis.on('ready', done);
    });
    return this.#readyWait;
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      await this.#whenReady();
      const answer = await sendCommand(this.redis, command);
      this.#commandsFailing = null;
      this.#answeredAt = performance.now();
      return answer;
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      const reason = connectionFailureReason(failure);
      if (reason === 'permission_denied' || reason === 'read_only_replica') {
        if (this.#writesRefused !== reason) this.#options.log?.error({ reason, error: failure.message }, reason === 'permission_denied' ? 'Redis refuses the store\'s commands: the user in REDIS_URL lacks a permission (requests to be stored are refused until it has it)' : 'Redis refuses the store\'s writes: REDIS_URL reaches a read-only replica, not the primary (requests to be stored are refused until it reaches the primary)');
        this.#writesRefused = reason;
      }
      this.#commandsFailing = reason;
      throw reason === 'permission_denied' ? storeRefusesCommands(error) : storeUnavailable(error);
    }
  }
}
