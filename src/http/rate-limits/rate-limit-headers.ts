import type { BucketState, RateLimitState } from '../../store/rate-limiter.ts';

/**
 * OpenAI's rate-limit headers — `x-ratelimit-{limit,remaining,reset}-requests`
 * (requests per minute) and `-tokens` (tokens per minute) — plus the same
 * three for `-tokens-day` (tokens per day), for each limit that is on.
 */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return { ...bucketHeaders('requests', state.requests), ...bucketHeaders('tokens', state.tokens), ...bucketHeaders('tokens-day', state.tokensDay) };
}

function bucketHeaders(suffix: string, bucket: BucketState | null): Record<string, string> {
  if (!bucket) return {};
  return {
    [`x-ratelimit-limit-${suffix}`]: String(bucket.limit),
    [`x-ratelimit-remaining-${suffix}`]: String(bucket.remaining),
    [`x-ratelimit-reset-${suffix}`]: formatDuration(bucket.resetMs),
  };
}

/** A duration as OpenAI writes its reset headers (Go's format): `20ms`, `1s`, `8.64s`, `6m0s`, `23h59m59.5s`. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1_000) return `${Math.ceil(ms)}ms`;
  const whole = Math.round(ms);
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = `${trimZeros(((whole % 60_000) / 1_000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

function trimZeros(decimal: string): string {
  return decimal.replace(/\.?0+$/, '') || '0';
}
