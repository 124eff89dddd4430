import { monotonicNow } from '../util/monotonic-clock.ts';
import type { ConversationTurn, ResponseStore, StoreHealth, StoredItem, StoredResponse } from './response-store.ts';
import { CHAIN_READ_DEPTH, keptForSeconds } from './response-store.ts';
import { serializeResponse } from '../protocol/response-json.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import { ByteArena, UNWRITTEN, type Span } from './byte-arena.ts';
import { HandleTable } from './handle-table.ts';
import { RecencyQueue } from './recency-queue.ts';

export interface MemoryStoreOptions {
  maxEntries: number;
  /** Most bytes of stored JSON kept (responses and their input items, as UTF-8); none by default. The newest response is kept whatever its size. */
  maxBytes?: number;
  ttlSeconds: number;
  /** The longest a response may run: a running one's record is kept this much longer (keptForSeconds). */
  longestRunSeconds?: number;
  now?: () => number;
  /** Told of each response that leaves the store (pushed out by the bounds, expired, deleted): what is kept beside it (its events) goes too. */
  onDropped?: (tenant: string, id: string) => void;
}

/**
 * One stored response. As a span it says where the response's JSON (the one
 * the reply sends, protocol/response-json.ts) and its input items' are, as
 * UTF-8 in the store's byte arena: readers get copies, so they can never
 * change what is stored, and the garbage collector neither copies nor scans
 * them. Every object an entry holds lives as long as the response stays
 * stored, so is promoted to the old generation: an entry is its own span,
 * and its item ids an array of their exact length.
 */
interface Entry extends Span {
  tenant: string;
  id: string;
  previousResponseId: string | null;
  itemIds: string[];
  /**
   * The response's status, and where its output's JSON is in its own (UTF-8
   * bytes; a length of -1 until a chain first reads it whole): later reads of
   * a chain's turn parse the output without the rest.
   */
  status: ResponseResource['status'];
  outputAt: number;
  outputBytes: number;
  expiresAt: number;
  /** Its index in `MemoryResponseStore.#entries`, which the id tables hold. */
  handle: number;
  /** Where the entry stands in the store's recency queue. */
  position: number;
  /** Items it took over from a response still stored then (it resent them, or resolved a reference to them): who to give each back to when this one goes. */
  displaced: Map<string, Heir> | null;
}

/**
 * Where the output's JSON is in the response's (in UTF-8 bytes), found in
 * the JSON as read back: a response's JSON, parsed and serialized again,
 * gives the same text, and any place the output's serialization appears at
 * holds exactly that text, so the first one found is as good as the `output`
 * field's. Null if not found (then the response is read whole, as before).
 */
function outputIn(json: string, output: unknown): { at: number; bytes: number } | null {
  const outputJson = JSON.stringify(output);
  const found = json.indexOf(outputJson);
  return found < 0 ? null : { at: Buffer.byteLength(json.slice(0, found)), bytes: Buffer.byteLength(outputJson) };
}

/** An earlier holder of an item, by handle and id: a handle alone may have been reused by another response since. */
interface Heir {
  handle: number;
  id: string;
}

/**
 * The embedded default: one process, nothing to install. Bounded by entry
 * count and by bytes (least recently used goes first: a count alone let a
 * few responses of 50 MB each hold gigabytes) and by age. Each response is kept
 * as its JSON; every read returns a fresh copy.
 */
export class MemoryResponseStore implements ResponseStore {
  readonly kind = 'memory';
  /** Every live entry by its handle; handles of removed entries are reused. */
  readonly #entries: (Entry | undefined)[] = [];
  readonly #freeHandles: number[] = [];
  /** (tenant, response id) → handle. */
  readonly #responses = new HandleTable();
  /** (tenant, item id) → the handle of the response that holds the item: a later put of the same item takes it over. */
  readonly #items = new HandleTable();
  readonly #arena = new ByteArena();
  /** Every entry, least recently used first. */
  readonly #recency = new RecencyQueue<Entry>();
  readonly #options: MemoryStoreOptions;
  readonly #maxBytes: number;
  /** UTF-8 bytes of every live entry's JSON. */
  #bytes = 0;
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions) {
    this.#options = options;
    this.#maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    this.#now = options.now ?? monotonicNow;
  }

  async put(record: StoredResponse): Promise<void> {
    const id = record.response.id;
    const existing = this.#entryOf(this.#responses.get(record.tenant, id));
    if (existing) this.#remove(existing);
    const { inputItems, response } = record;
    // Sized up front: an array grown by `push` keeps room for 16 more ids, for as long as the response is stored.
    const itemIds = new Array<string>(inputItems.length + response.output.length);
    for (let index = 0; index < inputItems.length; index++) itemIds[index] = inputItems[index]!.id;
    for (let index = 0; index < response.output.length; index++) itemIds[inputItems.length + index] = response.output[index]!.id;
    // Where its output is in its JSON is found by the first chain that reads it (#turnOf), not here: most responses are never read again.
    const entry: Entry = { chunk: UNWRITTEN, offset: 0, firstLength: 0, secondLength: 0, tenant: record.tenant, id, previousResponseId: record.previousResponseId, itemIds, status: response.status, outputAt: 0, outputBytes: -1, expiresAt: this.#now() + keptForSeconds(response, this.#options.ttlSeconds, this.#options.longestRunSeconds ?? 0) * 1000, handle: this.#freeHandles.pop() ?? this.#entries.length, position: 0, displaced: null };
    this.#arena.write(serializeResponse(response), JSON.stringify(inputItems), entry);
    this.#bytes += entry.firstLength + entry.secondLength;
    this.#entries[entry.handle] = entry;
    this.#responses.set(record.tenant, id, entry.handle);
    for (const itemId of itemIds) {
      const previous = this.#items.set(record.tenant, itemId, entry.handle);
      const holder = previous >= 0 && previous !== entry.handle ? this.#entries[previous] : undefined;
      if (holder) (entry.displaced ??= new Map()).set(itemId, { handle: holder.handle, id: holder.id });
    }
    this.#recency.append(entry);
    while (this.#recency.size > this.#options.maxEntries || (this.#bytes > this.#maxBytes && this.#recency.size > 1)) this.#drop(this.#recency.oldest()!);
  }

  async get(tenant: string, id: string): Promise<StoredResponse | null> {
    const entry = this.#lookup(this.#entryOf(this.#responses.get(tenant, id)));
    return entry ? this.#copyOf(entry) : null;
  }

  async chain(tenant: string, id: string): Promise<{ turns: ConversationTurn[]; missing: string | null }> {
    const turns: ConversationTurn[] = [];
    let next: string | null = id;
    for (let depth = 0; next !== null && depth < CHAIN_READ_DEPTH; depth++) {
      const entry = this.#lookup(this.#entryOf(this.#responses.get(tenant, next)));
      if (!entry) return { turns: turns.reverse(), missing: next };
      turns.push(this.#turnOf(entry));
      next = entry.previousResponseId;
    }
    return { turns: turns.reverse(), missing: null };
  }

  async items(tenant: string, ids: string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    for (const id of ids) {
      const entry = this.#lookup(this.#entryOf(this.#items.get(tenant, id)));
      if (!entry) continue;
      const turn = this.#turnOf(entry);
      const item = turn.inputItems.find((candidate) => candidate.id === id) ?? turn.output.find((candidate) => candidate.id === id);
      if (item) found.set(id, item);
    }
    return found;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    const entry = this.#live(this.#entryOf(this.#responses.get(tenant, id)));
    if (!entry) return false;
    this.#drop(entry);
    return true;
  }

  async ensureWritable(): Promise<void> {}

  isReady(): boolean {
    return true;
  }

  health(): StoreHealth {
    return { state: 'ready' };
  }

  async close(): Promise<void> {
    this.#entries.length = 0;
    this.#freeHandles.length = 0;
    this.#bytes = 0;
    this.#responses.clear();
    this.#items.clear();
    this.#recency.clear();
  }

  #copyOf(entry: Entry): StoredResponse {
    return { tenant: entry.tenant, response: JSON.parse(this.#arena.first(entry)) as StoredResponse['response'], inputItems: JSON.parse(this.#arena.second(entry)) as StoredResponse['inputItems'], previousResponseId: entry.previousResponseId };
  }

  /** What a chain needs of a stored response: its input items and its output, parsed without the rest of its JSON. */
  #turnOf(entry: Entry): ConversationTurn {
    const inputItems = JSON.parse(this.#arena.second(entry)) as ConversationTurn['inputItems'];
    if (entry.outputBytes >= 0) return { responseId: entry.id, status: entry.status, inputItems, output: JSON.parse(this.#arena.first(entry, entry.outputAt, entry.outputBytes)) as ConversationTurn['output'] };
    const json = this.#arena.first(entry);
    const { output } = JSON.parse(json) as ResponseResource;
    const found = outputIn(json, output);
    if (found) {
      entry.outputAt = found.at;
      entry.outputBytes = found.bytes;
    }
    return { responseId: entry.id, status: entry.status, inputItems, output };
  }

  #entryOf(handle: number): Entry | undefined {
    return handle < 0 ? undefined : this.#entries[handle];
  }

  /** The entry if it has not expired; an expired one is dropped. */
  #live(entry: Entry | undefined): Entry | null {
    if (!entry) return null;
    if (entry.expiresAt > this.#now()) return entry;
    this.#drop(entry);
    return null;
  }

  /** An entry still live, marked recently used. */
  #lookup(found: Entry | undefined): Entry | null {
    const entry = this.#live(found);
    if (!entry) return null;
    this.#recency.touch(entry);
    // Its bytes too, so that the chunks of the arena empty oldest first.
    this.#arena.move(entry);
    return entry;
  }

  /** The response leaves the store (not replaced by a newer version of itself). */
  #drop(entry: Entry): void {
    if (this.#remove(entry)) this.#options.onDropped?.(entry.tenant, entry.id);
  }

  /** False when the entry was no longer stored. */
  #remove(entry: Entry): boolean {
    if (this.#entries[entry.handle] !== entry) return false;
    this.#entries[entry.handle] = undefined;
    this.#freeHandles.push(entry.handle);
    this.#arena.release(entry);
    this.#bytes -= entry.firstLength + entry.secondLength;
    this.#recency.remove(entry);
    this.#responses.delete(entry.tenant, entry.id, entry.handle);
    // An item id is the response's own unless a later put of the same item took it over (then it holds another handle and stays);
    // one it took over goes back to the response it was taken from, if that one is still stored.
    for (const itemId of entry.itemIds) {
      if (!this.#items.delete(entry.tenant, itemId, entry.handle)) continue;
      const heir = entry.displaced?.get(itemId);
      if (heir && this.#entries[heir.handle]?.id === heir.id) this.#items.set(entry.tenant, itemId, heir.handle);
    }
    return true;
  }
}
