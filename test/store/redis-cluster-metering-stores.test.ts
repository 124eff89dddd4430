import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis-client.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisRateLimiter } from '../../src/store/redis-rate-limiter.ts';
import { RedisUsageStore } from '../../src/store/redis-usage-store.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { describeRateLimiterContract } from './rate-limiter-contract.ts';
import { describeUsageStoreContract } from './usage-store-contract.ts';

/** The same contracts on a three-master cluster: every script must stay within one slot (the hash tags of redis-keys.ts). */
let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const clients = new Map<object, RedisClient>();
async function open() {
  const client = connectRedis({ url: '', clusterNodes: cluster.nodes, commandTimeoutMs: 2_000 });
  await whenReady(client, 5_000);
  const keys = new RedisKeys(`loopgate-test:${randomUUID()}:`);
  return { client, limiter: new RedisRateLimiter({ client, keys, readyWaitMs: 2_000 }), usage: new RedisUsageStore({ client, keys, readyWaitMs: 2_000, retentionDays: 1 }) };
}
const close = async (store: object) => {
  clients.get(store)?.disconnect();
  clients.delete(store);
};

describeRateLimiterContract(
  'redis cluster',
  async () => {
    const opened = await open();
    clients.set(opened.limiter, opened.client);
    return opened.limiter;
  },
  close,
);
describeUsageStoreContract(
  'redis cluster',
  async () => {
    const opened = await open();
    clients.set(opened.usage, opened.client);
    return opened.usage;
  },
  close,
);
