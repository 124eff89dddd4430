import type { UsageCounts, UsageQuery, UsageRecord, UsageStore } from './usage-store.ts';

const COUNTS: readonly (keyof UsageCounts)[] = ['responses', 'inputTokens', 'outputTokens', 'cachedTokens', 'reasoningTokens', 'toolCalls'];

interface Group {
  entry: UsageRecord;
  waiting: { resolve: () => void; reject: (error: unknown) => void }[];
}

/**
 * The records of one event-loop turn summed per day, tenant and model before
 * they reach the store: under load many responses end in the same turn, and
 * on Redis each record is a script call (a command to build, send and parse,
 * ~20 µs of the gateway's CPU and the server's). Sums are what the store
 * would have added one by one. Every caller still learns how its own record
 * went. A read first sends what is waiting, so it sees every record made
 * before it.
 */
export class CoalescingUsageStore implements UsageStore {
  readonly #inner: UsageStore;
  #pending = new Map<string, Group>();
  #scheduled = false;

  constructor(inner: UsageStore) {
    this.#inner = inner;
  }

  record(entry: UsageRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      const key = JSON.stringify([entry.day, entry.tenant, entry.model]);
      const group = this.#pending.get(key);
      if (group) {
        for (const count of COUNTS) group.entry[count] += entry[count];
        group.waiting.push({ resolve, reject });
      } else {
        this.#pending.set(key, { entry: { ...entry }, waiting: [{ resolve, reject }] });
      }
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  read(query: UsageQuery): Promise<UsageRecord[]> {
    this.#flush();
    return this.#inner.read(query);
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#pending.size === 0) return;
    const groups = this.#pending;
    this.#pending = new Map();
    for (const { entry, waiting } of groups.values()) {
      this.#inner.record(entry).then(
        () => {
          for (const caller of waiting) caller.resolve();
        },
        (error: unknown) => {
          for (const caller of waiting) caller.reject(error);
        },
      );
    }
  }
}
