import type { BackgroundRef, BackgroundRegistry, LeaseRenewal } from './background-registry.ts';

/**
 * One process, one owner: the memory store's responses die with the process
 * that holds them, so there is no other replica to hand anything to. Cancels
 * are delivered at once; leases never lapse.
 */
export class MemoryBackgroundRegistry implements BackgroundRegistry {
  readonly #running = new Set<string>();
  readonly #cancelRequested = new Set<string>();
  readonly #listeners: ((ref: BackgroundRef) => void)[] = [];

  async register(ref: BackgroundRef): Promise<void> {
    this.#running.add(keyOf(ref));
  }

  async renew(owned: readonly BackgroundRef[]): Promise<LeaseRenewal> {
    return { cancelled: owned.filter((ref) => this.#cancelRequested.has(keyOf(ref))), lost: [] };
  }

  async unregister(ref: BackgroundRef): Promise<void> {
    this.#running.delete(keyOf(ref));
    this.#cancelRequested.delete(keyOf(ref));
  }

  async requestCancel(ref: BackgroundRef): Promise<void> {
    if (!this.#running.has(keyOf(ref))) return;
    this.#cancelRequested.add(keyOf(ref));
    for (const listener of this.#listeners) listener(ref);
  }

  onCancel(listener: (ref: BackgroundRef) => void): void {
    this.#listeners.push(listener);
  }

  async claimExpired(): Promise<BackgroundRef[]> {
    return [];
  }

  async close(): Promise<void> {
    this.#running.clear();
    this.#cancelRequested.clear();
  }
}

function keyOf(ref: BackgroundRef): string {
  return `${ref.tenant}\n${ref.id}`;
}
