import type { ConversationTurn, ResponseStore, StoredItem, StoredResponse, StoreHealth } from '../store/response-store.ts';
import type { StoreMeter } from './gateway-metrics.ts';

/**
 * A response store whose reads and writes are timed and whose failures are
 * counted, whichever store (memory, Redis, a test's) is inside. Readiness is
 * passed through untimed: it is cheap and asked on every request.
 */
export class MeteredResponseStore implements ResponseStore {
  readonly #inner: ResponseStore;
  readonly #meter: StoreMeter;

  constructor(inner: ResponseStore, meter: StoreMeter) {
    this.#inner = inner;
    this.#meter = meter;
  }

  get kind(): ResponseStore['kind'] {
    return this.#inner.kind;
  }

  put(record: StoredResponse): Promise<void> {
    return this.#meter.time('put', () => this.#inner.put(record));
  }

  get(tenant: string, id: string): Promise<StoredResponse | null> {
    return this.#meter.time('get', () => this.#inner.get(tenant, id));
  }

  chain(tenant: string, id: string): Promise<{ turns: ConversationTurn[]; missing: string | null }> {
    return this.#meter.time('chain', () => this.#inner.chain(tenant, id));
  }

  items(tenant: string, ids: string[]): Promise<Map<string, StoredItem>> {
    return this.#meter.time('items', () => this.#inner.items(tenant, ids));
  }

  delete(tenant: string, id: string): Promise<boolean> {
    return this.#meter.time('delete', () => this.#inner.delete(tenant, id));
  }

  isReady(): boolean {
    return this.#inner.isReady();
  }

  health(): StoreHealth {
    return this.#inner.health();
  }

  /** Asked only while the store is not ready: a failure here is a request refused for the store's sake, so it counts like a failed write. */
  ensureWritable(): Promise<void> {
    return this.#meter.time('ensureWritable', () => this.#inner.ensureWritable());
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
