import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/store/redis-client.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisRateLimiter } from '../../src/store/redis-rate-limiter.ts';
import { RedisUsageStore } from '../../src/store/redis-usage-store.ts';
import { CoalescingUsageStore } from '../../src/store/coalescing-usage-store.ts';
import type { UsageRecord } from '../../src/store/usage-store.ts';
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

describeUsageStoreContract(
  'redis, records of a turn coalesced',
  async () => {
    const opened = open();
    const store = new CoalescingUsageStore(opened.usage);
    clients.set(store, opened.client);
    return store;
  },
  close,
);

describe('Coalesced usage records', () => {
  it('go to Redis as one record per day, tenant and model of a turn, summed; each caller hears how its own went', async () => {
    const { client, usage: redisUsage } = open();
    const sent: UsageRecord[] = [];
    const counted = { record: (entry: UsageRecord) => (sent.push({ ...entry }), redisUsage.record(entry)), read: redisUsage.read.bind(redisUsage) };
    const store = new CoalescingUsageStore(counted);
    try {
      await Promise.all([
        store.record(usage('t', 'm', '2030-01-02')),
        store.record(usage('t', 'm', '2030-01-02', { inputTokens: 7, toolCalls: 2 })),
        store.record(usage('t', 'other-model', '2030-01-02')),
        store.record(usage('t', 'm', '2030-01-02')),
      ]);
      expect(sent.map((entry) => [entry.model, entry.responses, entry.inputTokens, entry.toolCalls])).toEqual([
        ['m', 3, 27, 2],
        ['other-model', 1, 10, 0],
      ]);
      // A read made in the same turn as a record sees it.
      const recorded = store.record(usage('t', 'm', '2030-01-02'));
      const read = await store.read({ tenant: 't', start: '2030-01-02', end: '2030-01-02' });
      await recorded;
      expect(read.find((entry) => entry.model === 'm')).toMatchObject({ responses: 4, inputTokens: 37, outputTokens: 20, cachedTokens: 8, reasoningTokens: 4, toolCalls: 2 });
      client.disconnect();
      await expect(store.record(usage('t', 'm', '2030-01-02'))).rejects.toThrow();
    } finally {
      client.disconnect();
    }
  });
});

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
      // A refund that comes after its bucket expired (a response that outlived it) recreates the bucket full: it still expires.
      await client.del(`${prefix}{k:key-id}:rl`);
      await limiter.charge('key-id', { requestsPerMinute: 10, tokensPerMinute: 100, tokensPerDay: null, concurrentResponses: 2 }, -40);
      const refundedTtl = await client.pttl(`${prefix}{k:key-id}:rl`);
      expect(refundedTtl).toBeGreaterThan(0);
      expect(refundedTtl).toBeLessThanOrEqual(1_000);
    } finally {
      client.disconnect();
    }
  });
});

describe("Redis rate limits when Redis's own clock steps back", () => {
  it('a bucket last written "in the future" keeps its level and refills from now (it drained until the clock caught up, refusing every request)', async () => {
    const prefix = redis.prefix();
    const { client, limiter } = open(prefix);
    const limits = { requestsPerMinute: 600, tokensPerMinute: null, tokensPerDay: null, concurrentResponses: null };
    const take = () => limiter.take('key', limits, { requests: 1, tokens: 0, slot: null, slotLeaseMs: 0 });
    try {
      expect((await take()).allowed).toBe(true);
      // What a bucket written an hour before NTP stepped Redis's clock back an hour looks like now.
      const [seconds] = (await client.time()) as [number | string, number | string];
      const bucket = new RedisKeys(prefix).rateLimitBuckets('key');
      await client.hset(bucket, 'r', '0', 'r@', String(Number(seconds) * 1000 + 3_600_000));
      const refused = await take();
      expect(refused.allowed).toBe(false);
      // Empty, it waits for one request's refill (100 ms at 600 a minute), not for the hour.
      expect(refused.allowed === false && refused.retryAfterMs).toBeLessThanOrEqual(1_000);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await take()).allowed).toBe(true);
    } finally {
      client.disconnect();
    }
  });
});
