/**
 * Which upstream output item an event, or the terminal response's copy of
 * an item, is about. OpenAI names each item by its `id` everywhere; compatible
 * servers do not all: llama.cpp's items have no `id` (its argument deltas name
 * the call's `call_id`), mistral.rs gives one message another id in each event,
 * and vLLM's terminal response gives a streamed call a new id and `call_id`.
 * An item is known by its place in the output (`output_index`, the same in
 * every event, and its index in the terminal `output`) while its kind agrees,
 * else by its id or `call_id`: one upstream item is one item for the client,
 * its text and arguments said once.
 */
export class ItemIdentities {
  /** By output index: the item's key and kind. */
  readonly #byIndex = new Map<number, { key: string; type: string }>();
  /** By every id an item was given (its `id`, its `call_id`). */
  readonly #byId = new Map<string, string>();
  #unplaced = 0;

  /** The key of an item added, done, or read whole at `outputIndex`: the one it had when first seen, or a new one. */
  keyOf(item: { type: string; id?: unknown; call_id?: unknown }, outputIndex: unknown): string {
    const id = nonEmpty(item.id);
    const callId = nonEmpty(item.call_id);
    const index = typeof outputIndex === 'number' ? outputIndex : null;
    const placed = index === null ? undefined : this.#byIndex.get(index);
    const key = (placed?.type === item.type ? placed.key : undefined) ?? (id && this.#byId.get(id)) ?? (callId && this.#byId.get(callId)) ?? id ?? (callId ? `call:${callId}` : `at:${index ?? `unplaced-${this.#unplaced++}`}`);
    if (index !== null && !placed) this.#byIndex.set(index, { key, type: item.type });
    if (id) this.#byId.set(id, key);
    if (callId) this.#byId.set(callId, key);
    return key;
  }

  /** The key of the item a delta names (`item_id`, else its `output_index`); the `item_id` itself for an item never added. */
  deltaKey(itemId: unknown, outputIndex: unknown): string {
    const id = nonEmpty(itemId);
    const known = (id && this.#byId.get(id)) ?? (typeof outputIndex === 'number' ? this.#byIndex.get(outputIndex)?.key : undefined);
    return known ?? id ?? `at:${typeof outputIndex === 'number' ? outputIndex : 'unplaced'}`;
  }

  /** Whether an item at `outputIndex` of this kind, or under one of these ids, was seen. */
  seen(item: { type: string; id?: unknown; call_id?: unknown }, outputIndex: number): string | null {
    const placed = this.#byIndex.get(outputIndex);
    if (placed?.type === item.type) return placed.key;
    const id = nonEmpty(item.id);
    const callId = nonEmpty(item.call_id);
    return (id && this.#byId.get(id)) || (callId && this.#byId.get(callId)) || null;
  }
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
