/** One API key's limits; null: that limit is off. */
export interface RateLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  tokensPerDay: number | null;
  concurrentResponses: number | null;
}

/** Which limit refused a take. */
export type LimitName = 'requests' | 'tokens' | 'tokens_day' | 'concurrency';

/** A token bucket's state, as the `x-ratelimit-*` headers report it. */
export interface BucketState {
  limit: number;
  /** Whole units left now (never below zero, though the bucket may be overdrawn). */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

/** Every configured limit of a key after a take (or as it stood when refused); null for limits that are off. */
export interface RateLimitState {
  requests: BucketState | null;
  tokens: BucketState | null;
  tokensDay: BucketState | null;
  concurrency: { limit: number; inUse: number } | null;
}

export interface TakeRequest {
  /** Requests to count: 1 for a new request, 0 for a token reservation. */
  requests: number;
  /** Tokens to reserve. Every token bucket must hold at least max(tokens, 1): an overdrawn bucket refuses even a request of unknown size. */
  tokens: number;
  /** A concurrency slot to take under this id; null takes none. */
  slot: string | null;
  /** How long the slot lives unless renewed (a replica that dies frees its slots by this). */
  slotLeaseMs: number;
}

export type TakeResult =
  | { allowed: true; state: RateLimitState }
  | {
      allowed: false;
      state: RateLimitState;
      limit: LimitName;
      /** When the same take could succeed; null when it never can (it asks for more than the limit itself). */
      retryAfterMs: number | null;
    };

/**
 * Rate limits and quotas per API key, shared by every replica. Requests and
 * tokens are token buckets refilled continuously (capacity: the limit; refill:
 * the limit per minute or per day), so a burst of up to the limit passes and
 * then the rate holds. Concurrency is a set of leased slots. `take` is atomic
 * and all-or-nothing: a refused take changes nothing.
 */
export interface RateLimiter {
  take(key: string, limits: RateLimits, request: TakeRequest): Promise<TakeResult>;
  /**
   * Debits `tokens` from the key's token buckets unconditionally (negative:
   * refunds, up to full): a finished response's real usage beyond what it
   * reserved. A bucket may go below zero; it then refuses until refilled.
   */
  charge(key: string, limits: RateLimits, tokens: number): Promise<void>;
  /** Frees a concurrency slot (a slot no longer held is ignored). */
  release(key: string, slot: string): Promise<void>;
  /** Extends the leases of slots still held. */
  renew(key: string, slots: readonly string[], leaseMs: number): Promise<void>;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** A slot frees whenever a running response ends, which no one can foretell: a refused client is told to try again after this. */
export const CONCURRENCY_RETRY_MS = 1_000;

/** Whether any limit is on (keys without limits never touch the limiter). */
export function hasLimits(limits: RateLimits): boolean {
  return limits.requestsPerMinute !== null || limits.tokensPerMinute !== null || limits.tokensPerDay !== null || limits.concurrentResponses !== null;
}
