import { randomUUID } from 'node:crypto';
import type { RateLimiter, RateLimits } from '../../store/rate-limiter.ts';
import { Admission, type AdmissionScope } from './admission.ts';
import type { KeyLimits } from './key-limits.ts';
import { rateLimitRefusal } from './rate-limit-refusal.ts';
import { SLOT_LEASE_MS, SlotKeeper } from './slot-keeper.ts';

interface GateLogger {
  warn(object: Record<string, unknown>, message: string): void;
  info(object: Record<string, unknown>, message: string): void;
}

/**
 * Rate limits and quotas at the door (README: "Usage and limits"): each
 * request that may reach an upstream is counted against its API key before
 * anything else runs, so a refused one costs no upstream call, no store
 * read, no tool listing. When the limiter's store is away, requests pass
 * unmetered (one warning per outage) rather than all being refused.
 */
export class RateLimitGate {
  readonly #limits: KeyLimits;
  readonly #scope: AdmissionScope;
  readonly #keeper: SlotKeeper;
  readonly #settling = new Set<Promise<void>>();
  #failing = false;

  constructor(options: { limiter: RateLimiter; limits: KeyLimits; log: GateLogger }) {
    const { limiter, log } = options;
    this.#limits = options.limits;
    const storeFailed = (error: unknown) => {
      if (!this.#failing) log.warn({ err: error }, 'rate limits: the limiter store failed; requests pass unmetered until it answers again');
      this.#failing = true;
    };
    this.#keeper = new SlotKeeper(limiter, storeFailed);
    this.#scope = {
      limiter,
      keeper: this.#keeper,
      storeFailed,
      storeWorks: () => {
        if (this.#failing) log.info({}, 'rate limits: the limiter store answers again');
        this.#failing = false;
      },
      track: (settlement) => {
        this.#settling.add(settlement);
        void settlement.finally(() => this.#settling.delete(settlement));
      },
    };
  }

  /**
   * Counts one request of the key and, for a response (`concurrent`), takes
   * one of its concurrency slots; throws the 429 when a limit refuses. Token
   * limits refuse here only when already spent; the request's own estimate
   * is reserved later (`Admission.reserveTokens`).
   */
  admit(keyId: string, options: { concurrent: boolean }): Admission | Promise<Admission> {
    const limits = this.#limits.of(keyId);
    // A key without limits is admitted at once: nothing to take, nothing to await.
    if (!limits) return Admission.unmetered;
    return this.#take(keyId, limits, options);
  }

  async #take(keyId: string, limits: RateLimits, options: { concurrent: boolean }): Promise<Admission> {
    const slot = options.concurrent && limits.concurrentResponses !== null ? randomUUID() : null;
    let taken;
    try {
      taken = await this.#scope.limiter.take(keyId, limits, { requests: 1, tokens: 0, slot, slotLeaseMs: SLOT_LEASE_MS });
      this.#scope.storeWorks();
    } catch (error) {
      this.#scope.storeFailed(error);
      return Admission.unmetered;
    }
    if (!taken.allowed) throw rateLimitRefusal(taken, 0);
    return new Admission(this.#scope, keyId, limits, slot, taken.state);
  }

  /** Resolves once the settlements under way (charges, released slots) have ended, before the store closes. */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.#settling]);
  }

  close(): void {
    this.#keeper.close();
  }
}
