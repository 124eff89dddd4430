import { GatewayError } from '../../errors/gateway-error.ts';
import type { BucketState, LimitName, RateLimitState } from '../../store/rate-limiter.ts';
import { formatDuration, rateLimitHeaders } from './rate-limit-headers.ts';

const LIMIT_WORDING: Record<Exclude<LimitName, 'concurrency'>, string> = { requests: 'requests per minute', tokens: 'tokens per minute', tokens_day: 'tokens per day' };

/**
 * The 429 of a refused request, as OpenAI sends it: `rate_limit_error` /
 * `rate_limit_exceeded`, `retry-after` (seconds) and `retry-after-ms` (which
 * the OpenAI SDKs wait for), and the `x-ratelimit-*` headers. A request that
 * can never pass (it alone needs more than the limit) says so and is not
 * worth retrying.
 */
export function rateLimitRefusal(refusal: { limit: LimitName; retryAfterMs: number | null; state: RateLimitState }, requestedTokens: number): GatewayError {
  const headers = rateLimitHeaders(refusal.state);
  const { limit, retryAfterMs, state } = refusal;
  if (retryAfterMs === null) {
    return new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: neverMessage(limit, state, requestedTokens), headers: { ...headers, 'x-should-retry': 'false' } });
  }
  headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1_000)));
  headers['retry-after-ms'] = String(retryAfterMs);
  const wait = formatDuration(retryAfterMs);
  let message: string;
  if (limit === 'concurrency') {
    message = `Too many concurrent responses on this API key: ${state.concurrency!.inUse} running, limit ${state.concurrency!.limit}. Try again when one has finished.`;
  } else {
    const bucket = bucketOf(limit, state)!;
    const requested = limit === 'requests' ? '' : requestedTokens > 0 ? `, requested about ${requestedTokens}` : '';
    message = `Rate limit reached for ${LIMIT_WORDING[limit]} on this API key: limit ${bucket.limit}, remaining ${bucket.remaining}${requested}. Try again in ${wait}.`;
  }
  return new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message, headers });
}

function neverMessage(limit: LimitName, state: RateLimitState, requestedTokens: number): string {
  if (limit === 'concurrency') return 'This API key may run no responses (its concurrent responses limit is 0).';
  const bucket = bucketOf(limit, state)!;
  if (limit === 'requests' || bucket.limit === 0) return `This API key may send no requests (its ${LIMIT_WORDING[limit]} limit is 0).`;
  return `This request needs about ${requestedTokens} tokens (its input and max_output_tokens), more than this API key's limit of ${bucket.limit} ${LIMIT_WORDING[limit]}: it cannot pass. Shorten the input or lower max_output_tokens.`;
}

function bucketOf(limit: Exclude<LimitName, 'concurrency'>, state: RateLimitState): BucketState | null {
  return limit === 'tokens_day' ? state.tokensDay : state[limit];
}
