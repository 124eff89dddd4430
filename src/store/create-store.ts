import type { GatewayConfig } from '../config/load-config.ts';
import { MemoryResponseStore, type MemoryStoreOptions } from './memory-response-store.ts';
import { RedisResponseStore } from './redis-response-store.ts';
import type { ResponseStore } from './response-store.ts';
import type { StoreLogger } from './connection-events-log.ts';

/** Redis when a URL or cluster nodes are configured (the cluster wins), the embedded memory store otherwise. */
/** `longestRunMs`: the longest one response may run (`loop.deadlineMs`), which a running response's record outlives. */
export function createStore(config: GatewayConfig['store'], longestRunMs: number, log?: StoreLogger, onDropped?: MemoryStoreOptions['onDropped']): ResponseStore {
  const longestRunSeconds = Math.ceil(longestRunMs / 1000);
  if (config.redisUrl || config.clusterNodes.length > 0) {
    return new RedisResponseStore({
      url: config.redisUrl ?? '',
      clusterNodes: config.clusterNodes,
      keyPrefix: config.keyPrefix,
      ttlSeconds: config.ttlSeconds,
      longestRunSeconds,
      commandTimeoutMs: config.commandTimeoutMs,
      connectTimeoutMs: config.connectTimeoutMs,
      ...(log && { log }),
    });
  }
  // In Redis, what is kept beside a response expires by itself (its events' TTL is far shorter than a response's).
  return new MemoryResponseStore({ maxEntries: config.maxEntries, maxBytes: config.maxBytes, ttlSeconds: config.ttlSeconds, longestRunSeconds, ...(onDropped && { onDropped }) });
}
