import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RateLimiter, RateLimits, TakeRequest } from '../../src/store/rate-limiter.ts';
import { sleep } from '../support/wait-for.ts';

const OFF: RateLimits = { requestsPerMinute: null, tokensPerMinute: null, tokensPerDay: null, concurrentResponses: null };
const request = (extra: Partial<TakeRequest> = {}): TakeRequest => ({ requests: 1, tokens: 0, slot: null, slotLeaseMs: 30_000, ...extra });

/**
 * The behaviour every RateLimiter must have, run against each implementation
 * on real time (Redis keeps its own clock). `create` returns a limiter; each
 * test uses keys of its own.
 */
export function describeRateLimiterContract(name: string, create: () => Promise<RateLimiter>, release: (limiter: RateLimiter) => Promise<void>): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const withLimiter = async (body: (limiter: RateLimiter, key: string) => Promise<void>) => {
      const limiter = await create();
      try {
        await body(limiter, `key-${randomUUID()}`);
      } finally {
        await release(limiter);
      }
    };

    it('lets a burst of up to the limit through, then refuses with the time until the next request fits', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, requestsPerMinute: 3 };
        const first = await limiter.take(key, limits, request());
        expect(first).toMatchObject({ allowed: true, state: { requests: { limit: 3, remaining: 2 }, tokens: null, tokensDay: null, concurrency: null } });
        // One request refills in a third of a minute; the bucket is full again once that one is back.
        expect(first.state.requests!.resetMs).toBeGreaterThan(15_000);
        expect(first.state.requests!.resetMs).toBeLessThanOrEqual(20_000);
        expect((await limiter.take(key, limits, request())).state.requests!.remaining).toBe(1);
        expect((await limiter.take(key, limits, request())).state.requests!.remaining).toBe(0);
        const refused = await limiter.take(key, limits, request());
        expect(refused).toMatchObject({ allowed: false, limit: 'requests', state: { requests: { limit: 3, remaining: 0 } } });
        if (refused.allowed) return;
        expect(refused.retryAfterMs).toBeGreaterThan(15_000);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(20_000);
        expect(refused.state.requests!.resetMs).toBeGreaterThan(55_000);
      }));

    it('refills continuously: after the retry time the next request passes', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, requestsPerMinute: 60 };
        await Promise.all(Array.from({ length: 60 }, () => limiter.take(key, limits, request())));
        const refused = await limiter.take(key, limits, request());
        expect(refused.allowed).toBe(false);
        if (refused.allowed) return;
        expect(refused.retryAfterMs).toBeLessThanOrEqual(1_000);
        await sleep(refused.retryAfterMs! + 20);
        expect((await limiter.take(key, limits, request())).allowed).toBe(true);
      }));

    it('is atomic under concurrent takes: exactly the limit passes', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, requestsPerMinute: 10 };
        const results = await Promise.all(Array.from({ length: 40 }, () => limiter.take(key, limits, request())));
        expect(results.filter((result) => result.allowed)).toHaveLength(10);
      }));

    it('is all or nothing: a take refused for tokens counts no request', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, requestsPerMinute: 5, tokensPerMinute: 100 };
        expect(await limiter.take(key, limits, request({ requests: 0, tokens: 80 }))).toMatchObject({ allowed: true, state: { requests: { remaining: 5 }, tokens: { limit: 100, remaining: 20 } } });
        const refused = await limiter.take(key, limits, request({ requests: 1, tokens: 30 }));
        expect(refused).toMatchObject({ allowed: false, limit: 'tokens', state: { requests: { remaining: 5 }, tokens: { remaining: 20 } } });
        if (!refused.allowed) expect(refused.retryAfterMs).toBeGreaterThan(5_000);
        expect(await limiter.take(key, limits, request({ requests: 1, tokens: 20 }))).toMatchObject({ allowed: true, state: { requests: { remaining: 4 }, tokens: { remaining: 0 } } });
      }));

    it('a take larger than the limit itself can never pass: no retry time', () =>
      withLimiter(async (limiter, key) => {
        const refused = await limiter.take(key, { ...OFF, tokensPerMinute: 100, tokensPerDay: 1_000 }, request({ tokens: 101 }));
        expect(refused).toMatchObject({ allowed: false, limit: 'tokens', retryAfterMs: null });
        expect(await limiter.take(key, { ...OFF, tokensPerDay: 1_000 }, request({ tokens: 1_001 }))).toMatchObject({ allowed: false, limit: 'tokens_day', retryAfterMs: null });
        expect(await limiter.take(key, { ...OFF, requestsPerMinute: 0 }, request())).toMatchObject({ allowed: false, limit: 'requests', retryAfterMs: null });
      }));

    it('charges what a response really used: overdrawn buckets refuse even a request of unknown size, refunds stop at full', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, tokensPerMinute: 1_000, tokensPerDay: 10_000 };
        expect(await limiter.take(key, limits, request({ tokens: 100 }))).toMatchObject({ allowed: true, state: { tokens: { remaining: 900 }, tokensDay: { remaining: 9_900 } } });
        // The response used 1,500 tokens where 100 were reserved.
        await limiter.charge(key, limits, 1_400);
        const refused = await limiter.take(key, limits, request());
        expect(refused).toMatchObject({ allowed: false, limit: 'tokens', state: { tokens: { remaining: 0 }, tokensDay: { remaining: 8_500 } } });
        // Overdrawn by about 500: more than half a minute before one token is back.
        if (!refused.allowed) expect(refused.retryAfterMs).toBeGreaterThan(29_000);
        await limiter.charge(key, limits, -5_000);
        expect(await limiter.take(key, limits, request({ requests: 0, tokens: 0 }))).toMatchObject({ allowed: true, state: { tokens: { remaining: 1_000, resetMs: 0 }, tokensDay: { remaining: 10_000 } } });
      }));

    it('holds concurrency slots until released; a refused slot is said to be worth retrying shortly', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, concurrentResponses: 2 };
        expect(await limiter.take(key, limits, request({ slot: 'a' }))).toMatchObject({ allowed: true, state: { concurrency: { limit: 2, inUse: 1 } } });
        expect(await limiter.take(key, limits, request({ slot: 'b' }))).toMatchObject({ allowed: true, state: { concurrency: { limit: 2, inUse: 2 } } });
        const refused = await limiter.take(key, limits, request({ slot: 'c' }));
        expect(refused).toMatchObject({ allowed: false, limit: 'concurrency', state: { concurrency: { inUse: 2 } } });
        if (!refused.allowed) expect(refused.retryAfterMs).toBeGreaterThan(0);
        // A take that asks for no slot (a token reservation) is not held up by them.
        expect((await limiter.take(key, limits, request({ requests: 0, tokens: 10 }))).allowed).toBe(true);
        await limiter.release(key, 'a');
        await limiter.release(key, 'a');
        expect(await limiter.take(key, limits, request({ slot: 'c' }))).toMatchObject({ allowed: true, state: { concurrency: { inUse: 2 } } });
      }));

    it('frees a slot whose lease lapsed (its replica died), and keeps one whose lease is renewed', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, concurrentResponses: 1 };
        expect((await limiter.take(key, limits, request({ slot: 'kept', slotLeaseMs: 300 }))).allowed).toBe(true);
        await sleep(150);
        await limiter.renew(key, ['kept', 'unknown'], 600);
        await sleep(300);
        expect((await limiter.take(key, limits, request({ slot: 'other', slotLeaseMs: 300 }))).allowed).toBe(false);
        await sleep(500);
        expect((await limiter.take(key, limits, request({ slot: 'other', slotLeaseMs: 300 }))).allowed).toBe(true);
      }));

    it('keeps keys apart, and a key with no limits on reports nothing', () =>
      withLimiter(async (limiter, key) => {
        const limits = { ...OFF, requestsPerMinute: 1 };
        expect((await limiter.take(key, limits, request())).allowed).toBe(true);
        expect((await limiter.take(key, limits, request())).allowed).toBe(false);
        expect((await limiter.take(`${key}-other`, limits, request())).allowed).toBe(true);
        expect(await limiter.take(`${key}-free`, OFF, request({ slot: 's' }))).toEqual({ allowed: true, state: { requests: null, tokens: null, tokensDay: null, concurrency: null } });
      }));
  });
}
