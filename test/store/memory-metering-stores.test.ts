import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/store/memory-rate-limiter.ts';
import { MemoryUsageStore } from '../../src/store/memory-usage-store.ts';
import { describeRateLimiterContract } from './rate-limiter-contract.ts';
import { describeUsageStoreContract, usage } from './usage-store-contract.ts';

describeRateLimiterContract('memory', async () => new MemoryRateLimiter(), async () => {});
describeUsageStoreContract('memory', async () => new MemoryUsageStore({ retentionDays: 36_500 }), async () => {});

describe('MemoryUsageStore retention', () => {
  it('drops days older than the retention as new days arrive', async () => {
    let now = Date.parse('2030-05-10T12:00:00Z');
    const store = new MemoryUsageStore({ retentionDays: 3, now: () => now });
    await store.record(usage('t', 'm', '2030-05-08'));
    await store.record(usage('t', 'm', '2030-05-10'));
    now = Date.parse('2030-05-11T00:30:00Z');
    await store.record(usage('t', 'm', '2030-05-11'));
    expect((await store.read({ tenant: 't', start: '2030-05-01', end: '2030-05-31' })).map((record) => record.day)).toEqual(['2030-05-10', '2030-05-11']);
  });
});

describe('MemoryRateLimiter on a clock of its own', () => {
  it('refills tokens per day over the day: 100 an hour for 2,400 a day', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter({ now: () => now });
    const limits = { requestsPerMinute: null, tokensPerMinute: null, tokensPerDay: 2_400, concurrentResponses: null };
    expect((await limiter.take('k', limits, { requests: 1, tokens: 2_400, slot: null, slotLeaseMs: 1_000 })).allowed).toBe(true);
    now += 3_600_000;
    expect(await limiter.take('k', limits, { requests: 1, tokens: 50, slot: null, slotLeaseMs: 1_000 })).toMatchObject({ allowed: true, state: { tokensDay: { remaining: 50, resetMs: 86_400_000 - 50 * 36_000 } } });
  });
});
