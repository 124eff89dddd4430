import type { ConversationClaim, ConversationStore, ItemPage, ItemPageQuery, StoredConversation } from './conversation-store.ts';
import type { StoredItem } from './response-store.ts';

export interface MemoryConversationStoreOptions {
  ttlSeconds: number;
  now?: () => number;
}

interface Entry {
  /** JSON of the conversation: readers get copies. */
  conversation: string;
  /** Item ids, oldest first. */
  order: string[];
  /** Item id → its JSON. */
  items: Map<string, string>;
  lock: { holder: string; expiresAt: number } | null;
  expiresAt: number;
}

/**
 * Conversations in this process (the embedded default). Each expires
 * `ttlSeconds` after its last write; claims expire on their own lease. Every
 * read returns a copy. An item appended with the id of an item already in the
 * conversation replaces it and moves to the end (ids stay unique), as in the
 * Redis store.
 */
export class MemoryConversationStore implements ConversationStore {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: MemoryConversationStoreOptions) {
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#now = options.now ?? Date.now;
  }

  async create(tenant: string, conversation: StoredConversation, items: StoredItem[]): Promise<void> {
    const entry: Entry = { conversation: JSON.stringify(conversation), order: [], items: new Map(), lock: null, expiresAt: 0 };
    appendTo(entry, items);
    this.#touch(entry);
    this.#entries.set(keyOf(tenant, conversation.id), entry);
  }

  async get(tenant: string, id: string): Promise<StoredConversation | null> {
    const entry = this.#lookup(tenant, id);
    return entry ? (JSON.parse(entry.conversation) as StoredConversation) : null;
  }

  async update(tenant: string, id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return null;
    const conversation = { ...(JSON.parse(entry.conversation) as StoredConversation), metadata: { ...metadata } };
    entry.conversation = JSON.stringify(conversation);
    this.#touch(entry);
    return JSON.parse(entry.conversation) as StoredConversation;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    if (!this.#lookup(tenant, id)) return false;
    this.#entries.delete(keyOf(tenant, id));
    return true;
  }

  async append(tenant: string, id: string, items: StoredItem[]): Promise<boolean> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return false;
    appendTo(entry, items);
    this.#touch(entry);
    return true;
  }

  async items(tenant: string, id: string): Promise<StoredItem[] | null> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return null;
    return entry.order.map((itemId) => JSON.parse(entry.items.get(itemId)!) as StoredItem);
  }

  async page(tenant: string, id: string, query: ItemPageQuery): Promise<ItemPage> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return { kind: 'conversation_not_found' };
    const ordered = query.order === 'asc' ? entry.order : [...entry.order].reverse();
    let start = 0;
    if (query.after !== undefined) {
      const index = ordered.indexOf(query.after);
      if (index < 0) return { kind: 'after_not_found' };
      start = index + 1;
    }
    const ids = ordered.slice(start, start + query.limit);
    return { kind: 'page', items: ids.map((itemId) => JSON.parse(entry.items.get(itemId)!) as StoredItem), hasMore: start + ids.length < ordered.length };
  }

  async item(tenant: string, id: string, itemId: string): Promise<StoredItem | null> {
    const json = this.#lookup(tenant, id)?.items.get(itemId);
    return json === undefined ? null : (JSON.parse(json) as StoredItem);
  }

  async deleteItem(tenant: string, id: string, itemId: string): Promise<boolean> {
    const entry = this.#lookup(tenant, id);
    if (!entry || !entry.items.delete(itemId)) return false;
    entry.order = entry.order.filter((candidate) => candidate !== itemId);
    this.#touch(entry);
    return true;
  }

  async claim(tenant: string, id: string, holder: string, ttlMs: number): Promise<ConversationClaim> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return 'conversation_not_found';
    const lock = this.#liveLock(entry);
    if (lock && lock.holder !== holder) return 'busy';
    entry.lock = { holder, expiresAt: this.#now() + ttlMs };
    return 'claimed';
  }

  async appendAndRelease(tenant: string, id: string, holder: string, items: StoredItem[]): Promise<void> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return;
    const lock = this.#liveLock(entry);
    if (lock && lock.holder !== holder) return;
    appendTo(entry, items);
    entry.lock = null;
    this.#touch(entry);
  }

  async release(tenant: string, id: string, holder: string): Promise<void> {
    const entry = this.#lookup(tenant, id);
    if (entry && this.#liveLock(entry)?.holder === holder) entry.lock = null;
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  #lookup(tenant: string, id: string): Entry | null {
    const key = keyOf(tenant, id);
    const entry = this.#entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return null;
    }
    return entry;
  }

  #liveLock(entry: Entry): Entry['lock'] {
    if (entry.lock && entry.lock.expiresAt <= this.#now()) entry.lock = null;
    return entry.lock;
  }

  #touch(entry: Entry): void {
    entry.expiresAt = this.#now() + this.#ttlMs;
  }
}

function appendTo(entry: Entry, items: readonly StoredItem[]): void {
  for (const item of items) {
    if (entry.items.has(item.id)) entry.order = entry.order.filter((candidate) => candidate !== item.id);
    entry.order.push(item.id);
    entry.items.set(item.id, JSON.stringify(item));
  }
}

function keyOf(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}
