import { monotonicNow } from '../util/monotonic-clock.ts';
import type { ConversationClaim, ConversationStore, ItemPage, ItemPageQuery, StoredConversation } from './conversation-store.ts';
import type { StoredItem } from './response-store.ts';

export interface MemoryConversationStoreOptions {
  ttlSeconds: number;
  /** Most conversations kept (`store.maxEntries`); the least recently written go first, never one a response is writing to. */
  maxEntries: number;
  now?: () => number;
}

/** How often expired conversations nobody reads again are let go. */
const SWEEP_MS = 60_000;

interface Entry {
  /** JSON of the conversation: readers get copies. */
  conversation: string;
  /** Item ids, oldest first. */
  order: string[];
  /** Item id → its JSON. */
  items: Map<string, string>;
  lock: { holder: string; expiresAt: number } | null;
  /** The last response to take the conversation: one whose claim lapsed adds nothing once another has taken it. */
  claimedBy: string | null;
  expiresAt: number;
}

/**
 * Conversations in this process (the embedded default). Each expires
 * `ttlSeconds` after its last write — its memory given back by a sweep, not
 * only when it is read again — and at most `maxEntries` are kept; claims
 * expire on their own lease. Every read returns a copy. An item appended with
 * the id of an item already in the conversation replaces it and moves to the
 * end (ids stay unique), as in the Redis store.
 */
export class MemoryConversationStore implements ConversationStore {
  /** By key, in the order of their last write: the front is what expires, or goes, first. */
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryConversationStoreOptions) {
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#maxEntries = options.maxEntries;
    this.#now = options.now ?? monotonicNow;
    this.#sweep = setInterval(() => this.sweep(), SWEEP_MS);
    this.#sweep.unref();
  }

  get size(): number {
    return this.#entries.size;
  }

  async create(tenant: string, conversation: StoredConversation, items: StoredItem[]): Promise<void> {
    const entry: Entry = { conversation: JSON.stringify(conversation), order: [], items: new Map(), lock: null, claimedBy: null, expiresAt: 0 };
    appendTo(entry, items);
    this.#entries.set(keyOf(tenant, conversation.id), entry);
    this.#touch(keyOf(tenant, conversation.id), entry);
    this.#bound();
  }

  /** Lets go of every expired conversation (the timer runs it every minute). */
  sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      // In write order: the first one still live ends the sweep (a held claim keeps an entry, not the order).
      if (entry.expiresAt > now) break;
      this.#entries.delete(key);
    }
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
    this.#touch(keyOf(tenant, id), entry);
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
    this.#touch(keyOf(tenant, id), entry);
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
    this.#touch(keyOf(tenant, id), entry);
    return true;
  }

  async claim(tenant: string, id: string, holder: string, ttlMs: number, renewing = false): Promise<ConversationClaim> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return 'conversation_not_found';
    const lock = this.#liveLock(entry);
    if (lock && lock.holder !== holder) return 'busy';
    // Lapsed: retaken only if nobody took it meanwhile.
    if (!lock && renewing && entry.claimedBy !== holder) return 'busy';
    entry.lock = { holder, expiresAt: this.#now() + ttlMs };
    entry.claimedBy = holder;
    // Taken or renewed, the conversation is kept a TTL from now, and while the claim lasts (#touch): it cannot expire under a response that runs in it.
    this.#touch(keyOf(tenant, id), entry);
    return 'claimed';
  }

  async appendAndRelease(tenant: string, id: string, holder: string, items: StoredItem[]): Promise<boolean> {
    const entry = this.#lookup(tenant, id);
    if (!entry) return true;
    const lock = this.#liveLock(entry);
    if (lock ? lock.holder !== holder : entry.claimedBy !== null && entry.claimedBy !== holder) return false;
    appendTo(entry, items);
    entry.lock = null;
    this.#touch(keyOf(tenant, id), entry);
    return true;
  }

  async release(tenant: string, id: string, holder: string): Promise<void> {
    const entry = this.#lookup(tenant, id);
    if (entry && this.#liveLock(entry)?.holder === holder) entry.lock = null;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
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

  /** Written now: it expires a TTL from now, or when a response's claim on it lapses if that is later, and goes to the back of the order. */
  #touch(key: string, entry: Entry): void {
    entry.expiresAt = Math.max(this.#now() + this.#ttlMs, this.#liveLock(entry)?.expiresAt ?? 0);
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  /** Over the bound, the least recently written go, passing over those a response is writing to (a live claim). */
  #bound(): void {
    if (this.#entries.size <= this.#maxEntries) return;
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries) return;
      if (this.#liveLock(entry)) continue;
      this.#entries.delete(key);
    }
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
