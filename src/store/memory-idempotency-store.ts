import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store.ts';

interface Entry {
  fingerprint: string;
  responseId: string | null;
  expiresAt: number;
}

/** Idempotency keys of one process, bounded by count (oldest first out) and age. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;

  constructor(options: { maxEntries: number }) {
    this.#maxEntries = options.maxEntries;
  }

  async begin(tenant: string, key: string, fingerprint: string, leaseSeconds: number): Promise<IdempotencyRecord> {
    const id = keyOf(tenant, key);
    const entry = this.#entries.get(id);
    if (entry && entry.expiresAt > Date.now()) {
      return entry.responseId === null ? { kind: 'pending', fingerprint: entry.fingerprint } : { kind: 'done', fingerprint: entry.fingerprint, responseId: entry.responseId };
    }
    this.#entries.delete(id);
    this.#entries.set(id, { fingerprint, responseId: null, expiresAt: Date.now() + leaseSeconds * 1000 });
    while (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    return { kind: 'new' };
  }

  async renew(tenant: string, key: string, leaseSeconds: number): Promise<void> {
    const entry = this.#entries.get(keyOf(tenant, key));
    if (entry && entry.responseId === null) entry.expiresAt = Date.now() + leaseSeconds * 1000;
  }

  async complete(tenant: string, key: string, fingerprint: string, responseId: string, ttlSeconds: number): Promise<void> {
    this.#entries.set(keyOf(tenant, key), { fingerprint, responseId, expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async release(tenant: string, key: string): Promise<void> {
    this.#entries.delete(keyOf(tenant, key));
  }
}

function keyOf(tenant: string, key: string): string {
  return `${tenant}\u0000${key}`;
}
