import { runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';
import { MAX_MODELS_PER_DAY, OTHER_MODEL, compareRecords, daysBetween, type UsageCounts, type UsageQuery, type UsageRecord, type UsageStore } from './usage-store.ts';

/** Hash fields are `<counter>:<model>`; counters never hold a colon, so the model is everything after the first. */
const COUNTERS: readonly [field: string, key: keyof UsageCounts][] = [
  ['responses', 'responses'],
  ['in', 'inputTokens'],
  ['out', 'outputTokens'],
  ['cached', 'cachedTokens'],
  ['reasoning', 'reasoningTokens'],
  ['tools', 'toolCalls'],
];
/** The hash field counting a day's distinct models. */
const MODEL_COUNT = '#models';

/**
 * Adds one response to its tenant's day and lists the tenant under the day,
 * both with the retention as TTL. KEYS: the tenant's day hash, the day's
 * tenant set (one `{u:<day>}` slot). ARGV: ttl seconds, most models, the
 * overflow model name, tenant, model, then one amount per counter in
 * COUNTERS order.
 */
const RECORD_SCRIPT = `
local ttl, most, model = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[5]
local fields = {${COUNTERS.map(([field]) => `'${field}'`).join(', ')}}
if redis.call('HEXISTS', KEYS[1], fields[1] .. ':' .. model) == 0 then
  if tonumber(redis.call('HGET', KEYS[1], '${MODEL_COUNT}') or '0') >= most then model = ARGV[3] end
  if redis.call('HEXISTS', KEYS[1], fields[1] .. ':' .. model) == 0 then redis.call('HINCRBY', KEYS[1], '${MODEL_COUNT}', 1) end
end
for i, field in ipairs(fields) do redis.call('HINCRBY', KEYS[1], field .. ':' .. model, tonumber(ARGV[5 + i])) end
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return 1`;

/**
 * Every tenant's usage of one day in one round trip: {tenant, its hash as a
 * flat list, …}. KEYS[1]: the day's tenant set; the tenants' hashes are
 * derived from ARGV[1], the day's prefix (same slot).
 */
const READ_DAY_SCRIPT = `
local result = {}
for _, tenant in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  result[#result + 1] = tenant
  result[#result + 1] = redis.call('HGETALL', ARGV[1] .. tenant)
end
return result`;

interface UsageCommands {
  loopgateRecordUsage(day: string, tenants: string, ...args: (string | number)[]): Promise<number>;
  loopgateReadUsageDay(tenants: string, prefix: string): Promise<(string | string[])[]>;
}

/** Usage in Redis (single or cluster), kept `retentionDays`: one script per response recorded, one round trip per day read. */
export class RedisUsageStore implements UsageStore {
  readonly #client: RedisClient & UsageCommands;
  readonly #keys: RedisKeys;
  readonly #readyWaitMs: number;
  readonly #ttlSeconds: number;

  constructor(options: { client: RedisClient; keys: RedisKeys; readyWaitMs: number; retentionDays: number }) {
    this.#client = options.client as RedisClient & UsageCommands;
    this.#keys = options.keys;
    this.#readyWaitMs = options.readyWaitMs;
    this.#ttlSeconds = options.retentionDays * 86_400;
    this.#client.defineCommand('loopgateRecordUsage', { numberOfKeys: 2, lua: RECORD_SCRIPT });
    this.#client.defineCommand('loopgateReadUsageDay', { numberOfKeys: 1, lua: READ_DAY_SCRIPT });
  }

  async record(entry: UsageRecord): Promise<void> {
    const amounts = COUNTERS.map(([, key]) => entry[key]);
    await runCommand(this.#client, this.#readyWaitMs, () =>
      this.#client.loopgateRecordUsage(this.#keys.usage(entry.day, entry.tenant), this.#keys.usageTenants(entry.day), this.#ttlSeconds, MAX_MODELS_PER_DAY, OTHER_MODEL, entry.tenant, entry.model, ...amounts),
    );
  }

  async read(query: UsageQuery): Promise<UsageRecord[]> {
    const days = daysBetween(query.start, query.end);
    const perDay = await runCommand(this.#client, this.#readyWaitMs, () => Promise.all(days.map((day) => this.#readDay(day, query.tenant))));
    return perDay.flat().sort(compareRecords);
  }

  async #readDay(day: string, tenant: string | null): Promise<UsageRecord[]> {
    if (tenant !== null) return recordsOf(day, tenant, await this.#client.hgetall(this.#keys.usage(day, tenant)));
    const reply = await this.#client.loopgateReadUsageDay(this.#keys.usageTenants(day), this.#keys.usagePrefix(day));
    const records: UsageRecord[] = [];
    for (let index = 0; index < reply.length; index += 2) {
      const flat = reply[index + 1] as string[];
      const hash: Record<string, string> = {};
      for (let field = 0; field < flat.length; field += 2) hash[flat[field]!] = flat[field + 1]!;
      records.push(...recordsOf(day, reply[index] as string, hash));
    }
    return records;
  }
}

function recordsOf(day: string, tenant: string, hash: Record<string, string>): UsageRecord[] {
  const byModel = new Map<string, UsageRecord>();
  for (const [field, value] of Object.entries(hash)) {
    const colon = field.indexOf(':');
    const counter = COUNTERS.find(([name]) => name === field.slice(0, colon));
    if (colon < 0 || !counter) continue;
    const model = field.slice(colon + 1);
    let record = byModel.get(model);
    if (!record) byModel.set(model, (record = { tenant, model, day, responses: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, toolCalls: 0 }));
    record[counter[1]] = Number(value);
  }
  return [...byModel.values()];
}
