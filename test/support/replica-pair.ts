import OpenAI from 'openai';
import { startGateway, type RunningGateway } from './gateway.ts';
import { acquireRedis, type TestRedis } from './redis.ts';
import { startRedisCluster, type TestRedisCluster } from './redis-cluster.ts';

export type StoreKind = 'memory' | 'redis' | 'redis-cluster';

/** Two gateways sharing one store, as two replicas; on the memory store both are the same process. */
export interface ReplicaPair {
  one: RunningGateway;
  other: RunningGateway;
  clientOne: OpenAI;
  clientOther: OpenAI;
  /** The `store` configuration both use (for more gateways on the same store). */
  store: Record<string, unknown>;
  close(): Promise<void>;
}

/** Starts the store (its own Redis, or a three-master cluster) and two gateways on it, pointed at `upstreamUrl`; `overrides.store` adds settings to the store's (a TTL, bounds). */
export async function startReplicaPair(storeKind: StoreKind, upstreamUrl: string, overrides: Record<string, unknown> = {}): Promise<ReplicaPair> {
  let redis: TestRedis | null = null;
  let cluster: TestRedisCluster | null = null;
  let store: Record<string, unknown> = {};
  if (storeKind === 'redis') {
    redis = await acquireRedis();
    store = { redisUrl: redis.url, keyPrefix: redis.prefix() };
  } else if (storeKind === 'redis-cluster') {
    cluster = await startRedisCluster();
    store = { clusterNodes: cluster.nodes, keyPrefix: 'replica-pair:' };
  }
  // The overrides' own store settings (a TTL, bounds) apply on top of where the store is.
  store = { ...(overrides.store as Record<string, unknown> | undefined), ...store };
  const one = await startGateway(upstreamUrl, { ...overrides, store });
  const other = storeKind === 'memory' ? one : await startGateway(upstreamUrl, { ...overrides, store });
  return {
    one,
    other,
    clientOne: new OpenAI({ baseURL: one.baseURL, apiKey: 'k', maxRetries: 0 }),
    clientOther: new OpenAI({ baseURL: other.baseURL, apiKey: 'k', maxRetries: 0 }),
    store,
    async close() {
      await one.close();
      if (other !== one) await other.close();
      await redis?.cleanup();
      await redis?.stop();
      await cluster?.stop();
    },
  };
}
