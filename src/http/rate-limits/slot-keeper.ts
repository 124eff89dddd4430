import type { RateLimiter } from '../../store/rate-limiter.ts';

/** How long a concurrency slot lives unrenewed: a replica that dies frees its slots within this. */
export const SLOT_LEASE_MS = 30_000;

/**
 * Renews the leases of the concurrency slots this replica holds, a third of
 * a lease apart, so a slot outlives its lease only while its response runs.
 */
export class SlotKeeper {
  readonly #limiter: RateLimiter;
  readonly #held = new Map<string, Set<string>>();
  readonly #timer: NodeJS.Timeout;
  readonly #onFailure: (error: unknown) => void;

  constructor(limiter: RateLimiter, onFailure: (error: unknown) => void) {
    this.#limiter = limiter;
    this.#onFailure = onFailure;
    this.#timer = setInterval(() => this.#renew(), SLOT_LEASE_MS / 3);
    this.#timer.unref();
  }

  hold(key: string, slot: string): void {
    let slots = this.#held.get(key);
    if (!slots) this.#held.set(key, (slots = new Set()));
    slots.add(slot);
  }

  drop(key: string, slot: string): void {
    const slots = this.#held.get(key);
    slots?.delete(slot);
    if (slots?.size === 0) this.#held.delete(key);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #renew(): void {
    for (const [key, slots] of this.#held) this.#limiter.renew(key, [...slots], SLOT_LEASE_MS).catch(this.#onFailure);
  }
}
