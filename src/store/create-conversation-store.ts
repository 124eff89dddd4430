import type { GatewayConfig } from '../config/load-config.ts';
import type { ConversationStore } from './conversation-store.ts';
import { MemoryConversationStore } from './memory-conversation-store.ts';
import { connectRedis } from './redis-client.ts';
import { RedisConversationStore } from './redis-conversation-store.ts';
import { RedisKeys } from './redis-keys.ts';

/** Redis (single or cluster) when one is configured, the embedded memory store otherwise. */
export function createConversationStore(config: GatewayConfig['store']): ConversationStore {
  const clusterNodes = config.clusterNodes ?? [];
  if (!config.redisUrl && clusterNodes.length === 0) return new MemoryConversationStore({ ttlSeconds: config.ttlSeconds, maxEntries: config.maxEntries });
  const client = connectRedis({ url: config.redisUrl ?? '', clusterNodes, commandTimeoutMs: config.commandTimeoutMs, connectTimeoutMs: config.connectTimeoutMs });
  // Errors surface on the commands that hit them (503 store_unavailable); the response store logs the connection's story.
  client.on('error', () => {});
  return new RedisConversationStore({ client, keys: new RedisKeys(config.keyPrefix), ttlSeconds: config.ttlSeconds, ownsClient: true, readyWaitMs: config.commandTimeoutMs });
}
