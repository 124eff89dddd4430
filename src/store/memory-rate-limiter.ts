import { monotonicNow } from '../util/monotonic-clock.ts';
import { CONCURRENCY_RETRY_MS, DAY_MS, MINUTE_MS, type BucketState, type LimitName, type RateLimiter, type RateLimits, type RateLimitState, type TakeRequest, type TakeResult } from './rate-limiter.ts';

interface Bucket {
  level: number;
  at: number;
}

interface KeyState {
  buckets: Map<LimitName, Bucket>;
  /** Slot id → lease expiry (ms). */
  slots: Map<string, number>;
}

interface BucketSpec {
  name: Exclude<LimitName, 'concurrency'>;
  capacity: number;
  periodMs: number;
  cost: number;
  /** What the bucket must hold for the take to pass. */
  needs: number;
}

/**
 * The limits of one process, with the same arithmetic as the Redis scripts
 * (redis-rate-limiter.ts). Keys untouched for a day are forgotten: their
 * buckets would be full again anyway.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #keys = new Map<string, KeyState & { touched: number }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? monotonicNow;
  }

  async take(key: string, limits: RateLimits, request: TakeRequest): Promise<TakeResult> {
    const now = this.#now();
    const state = this.#state(key, now);
    for (const [slot, expiry] of state.slots) if (expiry <= now) state.slots.delete(slot);
    const specs = bucketSpecs(limits, request);
    const levels = specs.map((spec) => level(state.buckets.get(spec.name), spec, now));
    let refusal: { limit: LimitName; retryAfterMs: number | null } | null = null;
    for (const [index, spec] of specs.entries()) {
      if (levels[index]! >= spec.needs) continue;
      refusal = { limit: spec.name, retryAfterMs: spec.needs > spec.capacity ? null : Math.ceil(((spec.needs - levels[index]!) * spec.periodMs) / spec.capacity) };
      break;
    }
    const concurrency = limits.concurrentResponses;
    if (!refusal && request.slot !== null && concurrency !== null && state.slots.size >= concurrency) {
      refusal = { limit: 'concurrency', retryAfterMs: concurrency === 0 ? null : CONCURRENCY_RETRY_MS };
    }
    if (!refusal) {
      for (const [index, spec] of specs.entries()) {
        levels[index] = levels[index]! - spec.cost;
        state.buckets.set(spec.name, { level: levels[index]!, at: now });
      }
      if (request.slot !== null && concurrency !== null) state.slots.set(request.slot, now + request.slotLeaseMs);
    }
    const reported: RateLimitState = {
      requests: null,
      tokens: null,
      tokensDay: null,
      concurrency: concurrency === null ? null : { limit: concurrency, inUse: state.slots.size },
    };
    for (const [index, spec] of specs.entries()) reported[stateField(spec.name)] = bucketState(spec, levels[index]!);
    return refusal ? { allowed: false, state: reported, ...refusal } : { allowed: true, state: reported };
  }

  async charge(key: string, limits: RateLimits, tokens: number): Promise<void> {
    const now = this.#now();
    const state = this.#state(key, now);
    for (const spec of bucketSpecs(limits, { requests: 0, tokens })) {
      if (spec.name === 'requests') continue;
      state.buckets.set(spec.name, { level: Math.min(spec.capacity, level(state.buckets.get(spec.name), spec, now) - tokens), at: now });
    }
  }

  async release(key: string, slot: string): Promise<void> {
    this.#keys.get(key)?.slots.delete(slot);
  }

  async renew(key: string, slots: readonly string[], leaseMs: number): Promise<void> {
    const state = this.#keys.get(key);
    if (!state) return;
    const expiry = this.#now() + leaseMs;
    for (const slot of slots) if (state.slots.has(slot)) state.slots.set(slot, expiry);
  }

  #state(key: string, now: number): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      this.#forgetIdle(now);
      state = { buckets: new Map(), slots: new Map(), touched: now };
      this.#keys.set(key, state);
    }
    state.touched = now;
    return state;
  }

  #forgetIdle(now: number): void {
    for (const [key, state] of this.#keys) if (state.slots.size === 0 && now - state.touched > DAY_MS) this.#keys.delete(key);
  }
}

/** The token buckets a take touches: each limit that is on, with what it costs and needs. */
export function bucketSpecs(limits: RateLimits, request: Pick<TakeRequest, 'requests' | 'tokens'>): BucketSpec[] {
  const specs: BucketSpec[] = [];
  if (limits.requestsPerMinute !== null) specs.push({ name: 'requests', capacity: limits.requestsPerMinute, periodMs: MINUTE_MS, cost: request.requests, needs: request.requests });
  const tokenNeeds = Math.max(request.tokens, 1);
  if (limits.tokensPerMinute !== null) specs.push({ name: 'tokens', capacity: limits.tokensPerMinute, periodMs: MINUTE_MS, cost: request.tokens, needs: tokenNeeds });
  if (limits.tokensPerDay !== null) specs.push({ name: 'tokens_day', capacity: limits.tokensPerDay, periodMs: DAY_MS, cost: request.tokens, needs: tokenNeeds });
  return specs;
}

/** A bucket's level now: refilled continuously at capacity per period, never above capacity; a new bucket is full. */
function level(bucket: Bucket | undefined, spec: BucketSpec, now: number): number {
  if (!bucket) return spec.capacity;
  // A clock that went back (an injected one; the default never does) refills nothing rather than draining the bucket.
  return Math.min(spec.capacity, bucket.level + (Math.max(0, now - bucket.at) * spec.capacity) / spec.periodMs);
}

function bucketState(spec: BucketSpec, level: number): BucketState {
  return { limit: spec.capacity, remaining: Math.max(0, Math.floor(level)), resetMs: spec.capacity === 0 ? 0 : Math.ceil(((spec.capacity - level) * spec.periodMs) / spec.capacity) };
}

function stateField(name: BucketSpec['name']): 'requests' | 'tokens' | 'tokensDay' {
  return name === 'tokens_day' ? 'tokensDay' : name;
}
