import { getHeapStatistics } from 'node:v8';
import type { GatewayConfig } from '../config/load-config.ts';
import type { BackgroundRegistry } from './background-registry.ts';
import { MemoryBackgroundRegistry } from './memory-background-registry.ts';
import { MemoryEventLog } from './memory-event-log.ts';
import { RedisBackgroundRegistry } from './redis-background-registry.ts';
import { connectRedis } from './redis-client.ts';
import { RedisEventLog } from './redis-event-log.ts';
import { RedisKeys } from './redis-keys.ts';
import type { ResponseEventLog } from './response-event-log.ts';
import type { IdempotencyStore } from './idempotency-store.ts';
import { MemoryIdempotencyStore } from './memory-idempotency-store.ts';
import { RedisIdempotencyStore } from './redis-idempotency-store.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import type { UsageStore } from './usage-store.ts';
import { RedisDeploymentHealth } from './redis-deployment-health.ts';
import { MemoryUsageStore } from './memory-usage-store.ts';
import { RedisUsageStore } from './redis-usage-store.ts';
import { CoalescingUsageStore } from './coalescing-usage-store.ts';

export interface BackgroundStores {
  events: ResponseEventLog;
  registry: BackgroundRegistry;
  idempotency: IdempotencyStore;
  /** Usage accounting per tenant, model and day. */
  usage: UsageStore;
  /** Rate limits and quotas per API key. */
  limiter: RateLimiter;
  /** Model deployments' cool-downs shared across replicas (providers/routing/); null: each process keeps its own. */
  deploymentHealth: RedisDeploymentHealth | null;
  /** Forgets a response's events at once (the memory store lets the response go); null in Redis, where they expire by themselves. */
  forgetEvents: ((tenant: string, id: string) => void) | null;
  close(): Promise<void>;
}

/** Event log, lease registry, idempotency keys, usage and rate limits beside the response store: Redis (single or cluster) when it is configured, this process otherwise. */
/** `log`: where a Redis registry says what it cannot do (pub/sub refused); none in tests. */
export function createBackgroundStores(config: Pick<GatewayConfig, 'store' | 'background' | 'usage'>, log?: { warn(fields: Record<string, unknown>, message: string): void }): BackgroundStores {
  const { store, background } = config;
  const retentionDays = config.usage.retentionDays;
  const limits = { maxEvents: background.maxEvents, maxBytes: background.maxEventBytes, ttlSeconds: background.eventsTtlSeconds };
  if (!store.redisUrl && store.clusterNodes.length === 0) {
    const events = new MemoryEventLog({ ...limits, maxTotalBytes: memoryEventLogBound(store.maxBytes) });
    const registry = new MemoryBackgroundRegistry();
    return {
      events,
      registry,
      idempotency: new MemoryIdempotencyStore({ maxEntries: store.maxEntries }),
      usage: new MemoryUsageStore({ retentionDays }),
      limiter: new MemoryRateLimiter(),
      deploymentHealth: null,
      forgetEvents: (tenant, id) => events.forget(tenant, id),
      close: async () => void (await Promise.all([events.close(), registry.close()])) };
  }
  const client = connectRedis({ url: store.redisUrl ?? '', clusterNodes: store.clusterNodes, commandTimeoutMs: store.commandTimeoutMs, connectTimeoutMs: store.connectTimeoutMs });
  // Its outages are logged by the response store's own connection; this one only must not crash on them.
  client.on('error', () => {});
  const keys = new RedisKeys(store.keyPrefix);
  const events = new RedisEventLog({ client, keys, limits, readyWaitMs: store.commandTimeoutMs });
  const registry = new RedisBackgroundRegistry({ client, keys, readyWaitMs: store.commandTimeoutMs, ...(log && { log }) });
  return {
    events,
    registry,
    idempotency: new RedisIdempotencyStore({ client, keys, readyWaitMs: store.commandTimeoutMs }),
    // One script call per day, tenant and model a turn, not one per response.
    usage: new CoalescingUsageStore(new RedisUsageStore({ client, keys, readyWaitMs: store.commandTimeoutMs, retentionDays })),
    limiter: new RedisRateLimiter({ client, keys, readyWaitMs: store.commandTimeoutMs }),
    deploymentHealth: new RedisDeploymentHealth({ client, keys, readyWaitMs: store.commandTimeoutMs }),
    forgetEvents: null,
    close: async () => {
      await Promise.all([events.close(), registry.close()]);
      client.disconnect();
    },
  };
}

/**
 * How much event JSON the memory event log keeps over every response: as
 * much as the response store keeps of responses (`store.maxBytes`), but at
 * most an eighth of the JS heap. The response store keeps its bytes outside
 * the heap; the events are strings on it, each streamed response's text
 * five times over (its deltas, its done events, the final response), and a
 * heap smaller than `store.maxBytes` (a container's default one) ran out
 * under background responses one after another (the gateway's own heap is
 * tens of MB, and a response in flight takes several times its size).
 */
function memoryEventLogBound(storeMaxBytes: number, heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.min(storeMaxBytes, Math.floor(heapLimitBytes / 8));
}
