import type { StoredItem } from './response-store.ts';

/** A conversation as the Conversations API shows it (its items live apart). */
export interface StoredConversation {
  id: string;
  created_at: number;
  metadata: Record<string, string>;
}

export interface ItemPageQuery {
  /** An item id of this conversation: the page starts after it (in `order`). */
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

export type ItemPage =
  | { kind: 'page'; items: StoredItem[]; hasMore: boolean }
  /** The conversation does not exist (or belongs to another tenant). */
  | { kind: 'conversation_not_found' }
  /** `after` names no item of this conversation. */
  | { kind: 'after_not_found' };

/** Outcome of taking a conversation for one response. */
export type ConversationClaim = 'claimed' | 'busy' | 'conversation_not_found';

/**
 * Durable threads (OpenAI's Conversations API). Every method is scoped to a
 * tenant: another tenant's conversation behaves exactly like an unknown one.
 *
 * Concurrency: a response that runs in a conversation first claims it
 * (`claim`); a second response on the same conversation while the first runs
 * is refused (409 `conversation_locked`) rather than queued, so items of two
 * responses never interleave and nothing waits minutes on a held HTTP
 * connection. The claim is a lease: the holder renews it while it runs, and a
 * holder that dies lets it lapse. `appendAndRelease` writes the response's
 * items and releases the claim in one atomic step.
 */
export interface ConversationStore {
  /** Creates a conversation with its initial items (ids already assigned). */
  create(tenant: string, conversation: StoredConversation, items: StoredItem[]): Promise<void>;
  get(tenant: string, id: string): Promise<StoredConversation | null>;
  /** Replaces the metadata; null when the conversation does not exist. */
  update(tenant: string, id: string, metadata: Record<string, string>): Promise<StoredConversation | null>;
  delete(tenant: string, id: string): Promise<boolean>;
  /** Appends items at the end; false when the conversation does not exist. */
  append(tenant: string, id: string, items: StoredItem[]): Promise<boolean>;
  /** Every item, oldest first (what the model sees); null when the conversation does not exist. */
  items(tenant: string, id: string): Promise<StoredItem[] | null>;
  page(tenant: string, id: string, query: ItemPageQuery): Promise<ItemPage>;
  /** One item; null when the conversation or the item does not exist. */
  item(tenant: string, id: string, itemId: string): Promise<StoredItem | null>;
  /** Removes one item; false when the conversation or the item does not exist. */
  deleteItem(tenant: string, id: string, itemId: string): Promise<boolean>;
  /** Takes the conversation for `holder` for `ttlMs` (renewed by calling again with the same holder and `renewing`: a claim that lapsed is retaken only if nobody took it meanwhile, else 'busy'); either way the conversation is kept a TTL from now and while the claim lasts, so it cannot expire under a response that runs in it. */
  claim(tenant: string, id: string, holder: string, ttlMs: number, renewing?: boolean): Promise<ConversationClaim>;
  /**
   * Appends the items (if `holder` still holds the claim, or its claim lapsed and nobody took the conversation since) and
   * releases the claim, atomically. False when another response took it after `holder`'s claim lapsed (whether that one
   * still holds it or has finished): nothing is appended.
   */
  appendAndRelease(tenant: string, id: string, holder: string, items: StoredItem[]): Promise<boolean>;
  /** Releases the claim without appending (a response that adds nothing). */
  release(tenant: string, id: string, holder: string): Promise<void>;
  close(): Promise<void>;
}
