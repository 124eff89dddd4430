import { MAX_MODELS_PER_DAY, OTHER_MODEL, compareRecords, utcDay, type UsageCounts, type UsageQuery, type UsageRecord, type UsageStore } from './usage-store.ts';

/** Usage of one process: day → tenant → model → counts; days older than the retention are dropped as new ones arrive. */
export class MemoryUsageStore implements UsageStore {
  readonly #days = new Map<string, Map<string, Map<string, UsageCounts>>>();
  readonly #retentionDays: number;
  readonly #now: () => number;

  constructor(options: { retentionDays: number; now?: () => number }) {
    this.#retentionDays = options.retentionDays;
    this.#now = options.now ?? Date.now;
  }

  async record(entry: UsageRecord): Promise<void> {
    let day = this.#days.get(entry.day);
    if (!day) {
      this.#forgetOldDays();
      day = new Map();
      this.#days.set(entry.day, day);
    }
    let models = day.get(entry.tenant);
    if (!models) day.set(entry.tenant, (models = new Map()));
    const model = models.has(entry.model) || models.size < MAX_MODELS_PER_DAY ? entry.model : OTHER_MODEL;
    const counts = models.get(model) ?? { responses: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, toolCalls: 0 };
    counts.responses += entry.responses;
    counts.inputTokens += entry.inputTokens;
    counts.outputTokens += entry.outputTokens;
    counts.cachedTokens += entry.cachedTokens;
    counts.reasoningTokens += entry.reasoningTokens;
    counts.toolCalls += entry.toolCalls;
    models.set(model, counts);
  }

  async read(query: UsageQuery): Promise<UsageRecord[]> {
    const records: UsageRecord[] = [];
    for (const [day, tenants] of this.#days) {
      if (day < query.start || day > query.end) continue;
      for (const [tenant, models] of tenants) {
        if (query.tenant !== null && tenant !== query.tenant) continue;
        for (const [model, counts] of models) records.push({ tenant, model, day, ...counts });
      }
    }
    return records.sort(compareRecords);
  }

  #forgetOldDays(): void {
    const oldest = utcDay(this.#now() - (this.#retentionDays - 1) * 86_400_000);
    for (const day of this.#days.keys()) if (day < oldest) this.#days.delete(day);
  }
}
