import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/store/redis-client.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisRateLimiter } from '../../src/store/redis-rate-limiter.ts';
import { RedisUsageStore } from '../../src/store/redis-usage-store.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { describeRateLimiterContract } from './rate-limiter-contract.ts';
import { describeUsageStoreContract, usage } from './usage-store-contract.ts';

let redis: TestRedis;
const clients = new Map<object, RedisClient>();
beforeAll(async () => {
  redis = await acquireRedis();
});
afterAll(async () => {
  await redis.cleanup();
  await redis.stop();
});

function open(prefix = redis.prefix()) {
  const client = connectRedis({ url: redis.url, commandTimeoutMs: 1_000 });
  const keys = new RedisKeys(prefix);
  return { client, limiter: new RedisRateLimiter({ client, keys, readyWaitMs: 1_000 }), usage: new RedisUsageStore({ client, keys, readyWaitMs: 1_000, retentionDays: 30 }) };
}

const close = async (store: object) => {
  clients.get(store)?.disconnect();
  clients.delete(store);
};
describeRateLimiterContract(
  'redis',
  async () => {
    const opened = open();
    clients.set(opened.limiter, opened.client);
    return opened.limiter;
  },
  close,
);
describeUsageStoreContract(
  'redis',
  async () => {
    const opened = open();
    clients.set(opened.usage, opened.client);
    return opened.usage;
  },
  close,
);

describe('Redis metering keys', () => {
  it('carry the retention (usage) and the time to full (buckets) as TTL, and never name the API key', async () => {
    const prefix = redis.prefix();
    const { client, limiter, usage: store } = open(prefix);
    try {
      await store.record(usage('t', 'm', '2030-01-01'));
      await limiter.take('key-id', { requestsPerMinute: 10, tokensPerMinute: 100, tokensPerDay: null, concurrentResponses: 2 }, { requests: 1, tokens: 50, slot: 'slot-1', slotLeaseMs: 5_000 });
      const keys = (await client.keys(`${prefix}*`)).sort();
      expect(keys).toEqual([`${prefix}{k:key-id}:rl`, `${prefix}{k:key-id}:slots`, `${prefix}{u:2030-01-01}:t:t`, `${prefix}{u:2030-01-01}:tenants`]);
      for (const key of keys.filter((name) => name.includes('{u:'))) {
        const ttl = await client.ttl(key);
        expect(ttl).toBeGreaterThan(29 * 86_400);
        expect(ttl).toBeLessThanOrEqual(30 * 86_400);
      }
      // Tokens: half the bucket back in 30 s; requests: one in 6 s. The key lives until both are full (plus a second).
      const bucketsTtl = await client.pttl(`${prefix}{k:key-id}:rl`);
      expect(bucketsTtl).toBeGreaterThan(25_000);
      expect(bucketsTtl).toBeLessThanOrEqual(31_000);
      const slotsTtl = await client.pttl(`${prefix}{k:key-id}:slots`);
      expect(slotsTtl).toBeGreaterThan(0);
      expect(slotsTtl).toBeLessThanOrEqual(5_000);
    } finally {
      client.disconnect();
    }
  });
});
