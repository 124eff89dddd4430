/**
 * Which upstream output item an event, or the terminal response's copy of
 * an item, is about. OpenAI names each item by its `id` everywhere; compatible
 * servers do not all: llama.cpp's items have no `id` (its argument deltas name
 * the call's `call_id`), mistral.rs gives one message another id in each event,
 * vLLM's terminal response gives a streamed call a new id and `call_id`, and
 * some bridges give every item `output_index` 0. One upstream item must be one
 * item for the client, its text and arguments said once:
 *
 * - an item's own `id` or `call_id`, once seen, always names it;
 * - `output_item.added` with neither known starts a new item (two items may
 *   share an `output_index`), which becomes the item at its index;
 * - `output_item.done` with neither known is the item last added at its index,
 *   if of the same kind (one item under a new id);
 * - the terminal response's copy with neither known is the first item of its
 *   kind the stream said and no copy matched yet (its list may be in another
 *   order, or hold items the stream never said, which are then new).
 */
export class ItemIdentities {
  /** By output index: the item last added there, and its kind. */
  readonly #byIndex = new Map<number, { key: string; type: string }>();
  /** By every id an item was given (its `id`, its `call_id`). */
  readonly #byId = new Map<string, string>();
  /** The stream's items of each kind, in the order first said. */
  readonly #said = new Map<string, string[]>();
  /** Items the terminal response's copies were matched to. */
  readonly #matched = new Set<string>();
  /** The item of each kind added (or begun by a delta) and not yet done: where a delta naming an unknown id belongs. */
  readonly #open = new Map<string, string>();
  #fresh = 0;

  /** An item `output_item.added` announces. */
  added(item: Item, outputIndex: unknown): string {
    const key = this.#known(item) ?? this.#new(item);
    if (typeof outputIndex === 'number') this.#byIndex.set(outputIndex, { key, type: item.type });
    this.#open.set(item.type, key);
    return this.#name(item, key);
  }

  /** An item `output_item.done` finishes (or a non-streamed answer's, at its index). */
  finished(item: Item, outputIndex: unknown): string {
    const placed = typeof outputIndex === 'number' ? this.#byIndex.get(outputIndex) : undefined;
    const key = this.#known(item) ?? (placed?.type === item.type ? placed.key : undefined) ?? this.#new(item);
    if (typeof outputIndex === 'number' && !placed) this.#byIndex.set(outputIndex, { key, type: item.type });
    if (this.#open.get(item.type) === key) this.#open.delete(item.type);
    return this.#name(item, key);
  }

  /**
   * The items of the terminal response's output, against what the stream
   * said: first each by its own id or `call_id`, then the rest each to the
   * first item of its kind the stream said and no copy matched (one under a
   * new id), else a new item (one the stream never said).
   */
  final(items: readonly Item[]): string[] {
    const keys = items.map((item) => this.#known(item));
    for (const key of keys) if (key !== undefined) this.#matched.add(key);
    return items.map((item, index) => {
      const key = keys[index] ?? this.#said.get(item.type)?.find((said) => !this.#matched.has(said)) ?? this.#new(item);
      this.#matched.add(key);
      return this.#name(item, key);
    });
  }

  /**
   * The item a delta for an item of `type` is about: the one its `item_id`
   * names, else the one of that kind at its `output_index`, else the one of
   * that kind still open (a server that names it otherwise in its deltas),
   * else a new one (text before its item was added). Its `item_id` names that item from here on.
   */
  deltaKey(itemId: unknown, outputIndex: unknown, type: string): string {
    const id = nonEmpty(itemId);
    const placed = typeof outputIndex === 'number' ? this.#byIndex.get(outputIndex) : undefined;
    let key = (id && this.#byId.get(id)) || (placed?.type === type ? placed.key : undefined) || this.#open.get(type);
    if (!key) {
      key = this.#new({ type });
      this.#open.set(type, key);
      if (typeof outputIndex === 'number' && !placed) this.#byIndex.set(outputIndex, { key, type });
    }
    if (id) this.#byId.set(id, key);
    return key;
  }

  #known(item: Item): string | undefined {
    const id = nonEmpty(item.id);
    const callId = nonEmpty(item.call_id);
    return (id && this.#byId.get(id)) || (callId && this.#byId.get(callId)) || undefined;
  }

  #new(item: Item): string {
    const key = `item:${this.#fresh++}`;
    let said = this.#said.get(item.type);
    if (!said) this.#said.set(item.type, (said = []));
    said.push(key);
    return key;
  }

  /** Remembers the item's ids as naming `key`. */
  #name(item: Item, key: string): string {
    const id = nonEmpty(item.id);
    const callId = nonEmpty(item.call_id);
    if (id) this.#byId.set(id, key);
    if (callId) this.#byId.set(callId, key);
    return key;
  }
}

interface Item {
  type: string;
  id?: unknown;
  call_id?: unknown;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
