import type { ConversationClaim, ConversationStore, ItemPage, ItemPageQuery, StoredConversation } from '../store/conversation-store.ts';
import type { StoredItem } from '../store/response-store.ts';
import type { StoreMeter } from './gateway-metrics.ts';

/** A conversation store whose every operation is timed and whose failures are counted (as MeteredResponseStore). */
export class MeteredConversationStore implements ConversationStore {
  readonly #inner: ConversationStore;
  readonly #meter: StoreMeter;

  constructor(inner: ConversationStore, meter: StoreMeter) {
    this.#inner = inner;
    this.#meter = meter;
  }

  create(tenant: string, conversation: StoredConversation, items: StoredItem[]): Promise<void> {
    return this.#meter.time('create', () => this.#inner.create(tenant, conversation, items));
  }

  get(tenant: string, id: string): Promise<StoredConversation | null> {
    return this.#meter.time('get', () => this.#inner.get(tenant, id));
  }

  update(tenant: string, id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    return this.#meter.time('update', () => this.#inner.update(tenant, id, metadata));
  }

  delete(tenant: string, id: string): Promise<boolean> {
    return this.#meter.time('delete', () => this.#inner.delete(tenant, id));
  }

  append(tenant: string, id: string, items: StoredItem[]): Promise<boolean> {
    return this.#meter.time('append', () => this.#inner.append(tenant, id, items));
  }

  items(tenant: string, id: string): Promise<StoredItem[] | null> {
    return this.#meter.time('items', () => this.#inner.items(tenant, id));
  }

  page(tenant: string, id: string, query: ItemPageQuery): Promise<ItemPage> {
    return this.#meter.time('page', () => this.#inner.page(tenant, id, query));
  }

  item(tenant: string, id: string, itemId: string): Promise<StoredItem | null> {
    return this.#meter.time('item', () => this.#inner.item(tenant, id, itemId));
  }

  deleteItem(tenant: string, id: string, itemId: string): Promise<boolean> {
    return this.#meter.time('delete_item', () => this.#inner.deleteItem(tenant, id, itemId));
  }

  claim(tenant: string, id: string, holder: string, ttlMs: number, renewing = false): Promise<ConversationClaim> {
    return this.#meter.time('claim', () => this.#inner.claim(tenant, id, holder, ttlMs, renewing));
  }

  appendAndRelease(tenant: string, id: string, holder: string, items: StoredItem[]): Promise<boolean> {
    return this.#meter.time('append_and_release', () => this.#inner.appendAndRelease(tenant, id, holder, items));
  }

  release(tenant: string, id: string, holder: string): Promise<void> {
    return this.#meter.time('release', () => this.#inner.release(tenant, id, holder));
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
