import { CONCURRENCY_RETRY_MS, type BucketState, type LimitName, type RateLimiter, type RateLimits, type RateLimitState, type TakeRequest, type TakeResult } from './rate-limiter.ts';
import { runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/*
 * One API key's limits live in two keys sharing its `{k:<key id>}` hash tag,
 * so every script below touches one slot (a cluster routes it by KEYS[1]):
 * a hash of token buckets (`r`, `t`, `d`: requests per minute, tokens per
 * minute, tokens per day, each a level and, under `<name>@`, when it was
 * set) and a sorted set of concurrency slots scored by lease expiry. Time is
 * Redis's own, so replicas' clocks never matter. The arithmetic is the
 * memory limiter's (memory-rate-limiter.ts). A limit that is off is -1.
 */

const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function keepFor(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
local function levelOf(key, field, capacity, period)
  local stored = redis.call('HMGET', key, field, field .. '@')
  if not stored[1] then return capacity end
  local elapsed = now - tonumber(stored[2])
  -- Redis's clock went back (NTP stepped it): the bucket keeps its level from now on, instead of draining until the clock catches up.
  if elapsed < 0 then
    redis.call('HSET', key, field .. '@', now)
    elapsed = 0
  end
  return math.min(capacity, tonumber(stored[1]) + elapsed * capacity / period)
end
local function resetOf(capacity, period, level)
  if capacity <= 0 then return 0 end
  return math.ceil((capacity - level) * period / capacity)
end
`;

/**
 * KEYS: buckets, slots. ARGV: requests/min, tokens/min, tokens/day,
 * concurrency, requests, tokens, slot id ('' for none), lease ms, retry ms
 * for a full concurrency. Returns {allowed, refused limit (1-4, 0 none),
 * retry ms (-1 never), then remaining and reset ms of each bucket (-1 when
 * off), slots in use}. Checks everything first: a refused take writes nothing.
 */
const TAKE_SCRIPT = `${PRELUDE}
local requests, tokens = tonumber(ARGV[5]), tonumber(ARGV[6])
local tokenNeeds = math.max(tokens, 1)
local specs = {
  {field = 'r', capacity = tonumber(ARGV[1]), period = 60000, cost = requests, needs = requests},
  {field = 't', capacity = tonumber(ARGV[2]), period = 60000, cost = tokens, needs = tokenNeeds},
  {field = 'd', capacity = tonumber(ARGV[3]), period = 86400000, cost = tokens, needs = tokenNeeds},
}
local levels = {}
local refused, retry = 0, -1
for i, spec in ipairs(specs) do
  if spec.capacity >= 0 then
    levels[i] = levelOf(KEYS[1], spec.field, spec.capacity, spec.period)
    if refused == 0 and levels[i] < spec.needs then
      refused = i
      if spec.needs <= spec.capacity then retry = math.ceil((spec.needs - levels[i]) * spec.period / spec.capacity) end
    end
  end
end
local concurrency, slot, lease = tonumber(ARGV[4]), ARGV[7], tonumber(ARGV[8])
local inUse = 0
if concurrency >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  inUse = redis.call('ZCARD', KEYS[2])
  if refused == 0 and slot ~= '' and inUse >= concurrency then
    refused = 4
    if concurrency > 0 then retry = tonumber(ARGV[9]) end
  end
end
local result = {refused == 0 and 1 or 0, refused, retry}
local keep = 0
for i, spec in ipairs(specs) do
  if levels[i] then
    if refused == 0 then
      levels[i] = levels[i] - spec.cost
      redis.call('HSET', KEYS[1], spec.field, tostring(levels[i]), spec.field .. '@', now)
    end
    local reset = resetOf(spec.capacity, spec.period, levels[i])
    keep = math.max(keep, reset)
    result[#result + 1] = math.floor(math.max(levels[i], 0))
    result[#result + 1] = reset
  else
    result[#result + 1] = -1
    result[#result + 1] = -1
  end
end
if refused == 0 then
  if keep > 0 then keepFor(KEYS[1], keep + 1000) end
  if concurrency >= 0 and slot ~= '' then
    redis.call('ZADD', KEYS[2], now + lease, slot)
    keepFor(KEYS[2], lease)
    inUse = inUse + 1
  end
end
result[#result + 1] = inUse
return result`;

/** KEYS: buckets. ARGV: tokens/min, tokens/day, tokens to debit (negative refunds, up to full). */
const CHARGE_SCRIPT = `${PRELUDE}
local tokens = tonumber(ARGV[3])
local specs = {{field = 't', capacity = tonumber(ARGV[1]), period = 60000}, {field = 'd', capacity = tonumber(ARGV[2]), period = 86400000}}
local keep = 0
for _, spec in ipairs(specs) do
  if spec.capacity >= 0 then
    local level = math.min(spec.capacity, levelOf(KEYS[1], spec.field, spec.capacity, spec.period) - tokens)
    redis.call('HSET', KEYS[1], spec.field, tostring(level), spec.field .. '@', now)
    keep = math.max(keep, resetOf(spec.capacity, spec.period, level))
  end
end
-- Always a TTL: a refund to a bucket that had expired recreates it, full, and full needs no keeping.
keepFor(KEYS[1], keep + 1000)
return 1`;

/** KEYS: slots. ARGV: lease ms, then slot ids; only slots still held are extended. */
const RENEW_SCRIPT = `${PRELUDE}
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i]) end
keepFor(KEYS[1], lease)
return 1`;

interface LimiterCommands {
  loopgateTake(buckets: string, slots: string, ...args: (string | number)[]): Promise<number[]>;
  loopgateCharge(buckets: string, tokensPerMinute: number, tokensPerDay: number, tokens: number): Promise<number>;
  loopgateRenewSlots(slots: string, leaseMs: number, ...ids: string[]): Promise<number>;
}

const REFUSED: Record<number, LimitName> = { 1: 'requests', 2: 'tokens', 3: 'tokens_day', 4: 'concurrency' };

/** Rate limits in Redis (single or cluster), one script per operation, shared by every replica. */
export class RedisRateLimiter implements RateLimiter {
  readonly #client: RedisClient & LimiterCommands;
  readonly #keys: RedisKeys;
  readonly #readyWaitMs: number;

  constructor(options: { client: RedisClient; keys: RedisKeys; readyWaitMs: number }) {
    this.#client = options.client as RedisClient & LimiterCommands;
    this.#keys = options.keys;
    this.#readyWaitMs = options.readyWaitMs;
    this.#client.defineCommand('loopgateTake', { numberOfKeys: 2, lua: TAKE_SCRIPT });
    this.#client.defineCommand('loopgateCharge', { numberOfKeys: 1, lua: CHARGE_SCRIPT });
    this.#client.defineCommand('loopgateRenewSlots', { numberOfKeys: 1, lua: RENEW_SCRIPT });
  }

  async take(key: string, limits: RateLimits, request: TakeRequest): Promise<TakeResult> {
    const args = [off(limits.requestsPerMinute), off(limits.tokensPerMinute), off(limits.tokensPerDay), off(limits.concurrentResponses), request.requests, request.tokens, request.slot ?? '', request.slotLeaseMs, CONCURRENCY_RETRY_MS];
    const reply = await runCommand(this.#client, this.#readyWaitMs, () => this.#client.loopgateTake(this.#keys.rateLimitBuckets(key), this.#keys.rateLimitSlots(key), ...args));
    const [allowed, refused, retry, ...rest] = reply.map(Number) as [number, number, number, ...number[]];
    const bucket = (limit: number | null, index: number): BucketState | null => (limit === null ? null : { limit, remaining: rest[index * 2]!, resetMs: rest[index * 2 + 1]! });
    const state: RateLimitState = {
      requests: bucket(limits.requestsPerMinute, 0),
      tokens: bucket(limits.tokensPerMinute, 1),
      tokensDay: bucket(limits.tokensPerDay, 2),
      concurrency: limits.concurrentResponses === null ? null : { limit: limits.concurrentResponses, inUse: rest[6]! },
    };
    if (allowed === 1) return { allowed: true, state };
    return { allowed: false, state, limit: REFUSED[refused]!, retryAfterMs: retry < 0 ? null : retry };
  }

  async charge(key: string, limits: RateLimits, tokens: number): Promise<void> {
    if (limits.tokensPerMinute === null && limits.tokensPerDay === null) return;
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.loopgateCharge(this.#keys.rateLimitBuckets(key), off(limits.tokensPerMinute), off(limits.tokensPerDay), tokens));
  }

  async release(key: string, slot: string): Promise<void> {
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.zrem(this.#keys.rateLimitSlots(key), slot));
  }

  async renew(key: string, slots: readonly string[], leaseMs: number): Promise<void> {
    if (slots.length === 0) return;
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.loopgateRenewSlots(this.#keys.rateLimitSlots(key), leaseMs, ...slots));
  }
}

function off(limit: number | null): number {
  return limit ?? -1;
}
