import { monotonicNow } from '../util/monotonic-clock.ts';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store.ts';

interface Entry {
  fingerprint: string;
  responseId: string | null;
  expiresAt: number;
}

/**
 * Idempotency keys of one process, bounded by count and age. Past the count,
 * finished keys go first, those finished longest ago first; a key whose
 * request still runs is never pushed out (its retry would run it a second
 * time): those are as many as the requests in flight.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;

  constructor(options: { maxEntries: number }) {
    this.#maxEntries = options.maxEntries;
  }

  async begin(tenant: string, key: string, fingerprint: string, leaseSeconds: number): Promise<IdempotencyRecord> {
    const id = keyOf(tenant, key);
    const entry = this.#entries.get(id);
    if (entry && entry.expiresAt > monotonicNow()) {
      return entry.responseId === null ? { kind: 'pending', fingerprint: entry.fingerprint } : { kind: 'done', fingerprint: entry.fingerprint, responseId: entry.responseId };
    }
    this.#entries.delete(id);
    this.#entries.set(id, { fingerprint, responseId: null, expiresAt: monotonicNow() + leaseSeconds * 1000 });
    this.#evictOverCount();
    return { kind: 'new' };
  }

  /** Oldest first, passing over keys whose request still runs (live pending ones). */
  #evictOverCount(): void {
    if (this.#entries.size <= this.#maxEntries) return;
    const now = monotonicNow();
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries) return;
      if (entry.responseId !== null || entry.expiresAt <= now) this.#entries.delete(id);
    }
  }

  async renew(tenant: string, key: string, leaseSeconds: number): Promise<void> {
    const entry = this.#entries.get(keyOf(tenant, key));
    if (entry && entry.responseId === null) entry.expiresAt = monotonicNow() + leaseSeconds * 1000;
  }

  async complete(tenant: string, key: string, fingerprint: string, responseId: string, ttlSeconds: number): Promise<void> {
    const id = keyOf(tenant, key);
    // Its window starts now: moved behind the keys finished before it.
    this.#entries.delete(id);
    this.#entries.set(id, { fingerprint, responseId, expiresAt: monotonicNow() + ttlSeconds * 1000 });
    this.#evictOverCount();
  }

  async release(tenant: string, key: string): Promise<void> {
    this.#entries.delete(keyOf(tenant, key));
  }
}

function keyOf(tenant: string, key: string): string {
  return `${tenant}\u0000${key}`;
}
