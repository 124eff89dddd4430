import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { apiKeyId, DEFAULT_KEY_ID } from '../../src/http/authenticate.ts';
import { KeyLimits } from '../../src/http/rate-limits/key-limits.ts';
import { formatDuration, rateLimitHeaders } from '../../src/http/rate-limits/rate-limit-headers.ts';
import { rateLimitRefusal } from '../../src/http/rate-limits/rate-limit-refusal.ts';

describe('rate-limit headers', () => {
  it("write reset times in OpenAI's format", () => {
    expect([0, 1, 20, 999.2, 1_000, 8_640, 59_999, 60_000, 360_000, 361_500, 3_600_000, 86_399_500].map(formatDuration)).toEqual([
      '0s',
      '1ms',
      '20ms',
      '1000ms',
      '1s',
      '8.64s',
      '59.999s',
      '1m0s',
      '6m0s',
      '6m1.5s',
      '1h0m0s',
      '23h59m59.5s',
    ]);
  });

  it('report each limit that is on, and nothing for the rest', () => {
    expect(rateLimitHeaders({ requests: { limit: 60, remaining: 59, resetMs: 1_000 }, tokens: null, tokensDay: { limit: 1_000_000, remaining: 999_000, resetMs: 86_400 }, concurrency: { limit: 2, inUse: 1 } })).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-limit-tokens-day': '1000000',
      'x-ratelimit-remaining-tokens-day': '999000',
      'x-ratelimit-reset-tokens-day': '1m26.4s',
    });
  });

  it('a refusal carries retry-after in whole seconds (at least 1) and in milliseconds', () => {
    const state = { requests: { limit: 3, remaining: 0, resetMs: 60_000 }, tokens: null, tokensDay: null, concurrency: null };
    const error = rateLimitRefusal({ limit: 'requests', retryAfterMs: 250, state }, 0);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(error.headers).toMatchObject({ 'retry-after': '1', 'retry-after-ms': '250', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s' });
    expect(error.message).toBe('Rate limit reached for requests per minute on this API key: limit 3, remaining 0. Try again in 250ms.');
  });
});

describe('KeyLimits', () => {
  const config = GatewayConfig.parse({
    limits: { requestsPerMinute: 100, tokensPerDay: 1_000_000 },
    auth: {
      apiKeys: [
        { key: 'sk-defaults-only', tenant: 'a' },
        { key: 'sk-own-limits-1', tenant: 'a', limits: { requestsPerMinute: 5, tokensPerDay: null, concurrentResponses: 2 } },
        { key: 'sk-unlimited-01', tenant: 'b', limits: { requestsPerMinute: null, tokensPerDay: null } },
      ],
    },
  });
  const limits = new KeyLimits(config);

  it("takes a key's own limits where it sets them, the defaults elsewhere; null lifts a default", () => {
    expect(limits.of(apiKeyId('sk-defaults-only'))).toEqual({ requestsPerMinute: 100, tokensPerMinute: null, tokensPerDay: 1_000_000, concurrentResponses: null });
    expect(limits.of(apiKeyId('sk-own-limits-1'))).toEqual({ requestsPerMinute: 5, tokensPerMinute: null, tokensPerDay: null, concurrentResponses: 2 });
  });

  it('meters nothing for a key without limits, nor for unknown keys', () => {
    expect(limits.of(apiKeyId('sk-unlimited-01'))).toBeNull();
    expect(limits.of('0123')).toBeNull();
  });

  it('without API keys the whole gateway is one caller under the defaults', () => {
    expect(new KeyLimits(GatewayConfig.parse({ limits: { concurrentResponses: 8 } })).of(DEFAULT_KEY_ID)).toMatchObject({ concurrentResponses: 8 });
    expect(new KeyLimits(GatewayConfig.parse({})).of(DEFAULT_KEY_ID)).toBeNull();
  });

  it('keeps limits under a digest that is neither the key nor its authentication digest', () => {
    const id = apiKeyId('sk-own-limits-1');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).not.toContain('sk-');
  });
});
