import type { ConversationTurn, ResponseStore, StoredItem, StoredResponse } from './response-store.ts';
import { MAX_CHAIN_DEPTH } from './response-store.ts';

export interface MemoryStoreOptions {
  maxEntries: number;
  ttlSeconds: number;
  now?: () => number;
}

interface Entry {
  record: StoredResponse;
  expiresAt: number;
}

/**
 * The embedded default: one process, nothing to install. Bounded by entry
 * count (least recently used goes first) and by age.
 */
export class MemoryResponseStore implements ResponseStore {
  readonly kind = 'memory';
  readonly #entries = new Map<string, Entry>();
  readonly #items = new Map<string, StoredItem>();
  readonly #options: MemoryStoreOptions;
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async put(record: StoredResponse): Promise<void> {
    const key = keyOf(record.tenant, record.response.id);
    this.#remove(key);
    this.#entries.set(key, { record: structuredClone(record), expiresAt: this.#now() + this.#options.ttlSeconds * 1000 });
    for (const item of itemsOf(record)) this.#items.set(keyOf(record.tenant, item.id), item);
    while (this.#entries.size > this.#options.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#remove(oldest);
    }
  }

  async get(tenant: string, id: string): Promise<StoredResponse | null> {
    const record = this.#lookup(keyOf(tenant, id));
    return record ? structuredClone(record) : null;
  }

  async chain(tenant: string, id: string): Promise<{ turns: ConversationTurn[]; missing: string | null }> {
    const turns: ConversationTurn[] = [];
    let next: string | null = id;
    for (let depth = 0; next !== null && depth < MAX_CHAIN_DEPTH; depth++) {
      const record = this.#lookup(keyOf(tenant, next));
      if (!record) return { turns: turns.reverse(), missing: next };
      turns.push(structuredClone({ responseId: record.response.id, status: record.response.status, inputItems: record.inputItems, output: record.response.output }));
      next = record.previousResponseId;
    }
    return { turns: turns.reverse(), missing: null };
  }

  async items(tenant: string, ids: string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    for (const id of ids) {
      const item = this.#items.get(keyOf(tenant, id));
      if (item) found.set(id, structuredClone(item));
    }
    return found;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    const key = keyOf(tenant, id);
    if (!this.#lookup(key)) return false;
    this.#remove(key);
    return true;
  }

  isReady(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.#entries.clear();
    this.#items.clear();
  }

  /** Reads an entry, dropping it when expired and marking it recently used otherwise. */
  #lookup(key: string): StoredResponse | null {
    const entry = this.#entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.#now()) {
      this.#remove(key);
      return null;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.record;
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    for (const item of itemsOf(entry.record)) this.#items.delete(keyOf(entry.record.tenant, item.id));
  }
}

function keyOf(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}

function itemsOf(record: StoredResponse): StoredItem[] {
  return [...record.inputItems, ...record.response.output];
}
