import type { LoopObserver } from '../../engine/loop-observer.ts';
import { estimateTurnTokens } from '../../engine/token-estimate.ts';
import type { TurnRequest } from '../../providers/provider.ts';
import type { RateLimiter, RateLimits, RateLimitState } from '../../store/rate-limiter.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import { rateLimitRefusal } from './rate-limit-refusal.ts';
import { SLOT_LEASE_MS, type SlotKeeper } from './slot-keeper.ts';

/** What an admission needs of its gate. */
export interface AdmissionScope {
  limiter: RateLimiter;
  keeper: SlotKeeper;
  /** The limiter failed (its store is away): the request goes on unmetered, and this reports it. */
  storeFailed(error: unknown): void;
  storeWorks(): void;
  /** Keeps a settlement under way, so a closing gateway can wait for it. */
  track(settlement: Promise<void>): void;
}

/**
 * One admitted request's hold on its API key's limits: the request counted
 * and perhaps a concurrency slot taken (rate-limit-gate.ts), then the tokens
 * its first model call is estimated to need reserved (`reserveTokens`, the
 * engine's `admit` hook), then — once the response has ended, however — the
 * tokens it really used charged in place of the reservation and the slot
 * freed (`settle`, once; `responseEnded` or `responseRefused` does it for
 * the engine, `done` for whoever holds the admission).
 */
export class Admission {
  /** The admission of a key without limits: nothing to take, to report or to give back. */
  static readonly unmetered = new Admission(null, null, null, null);

  readonly #scope: AdmissionScope | null;
  readonly #key: string | null;
  readonly #limits: RateLimits | null;
  readonly #slot: string | null;
  #state: RateLimitState | null = null;
  #reserved = 0;
  #settlement: Promise<void> | null = null;

  constructor(scope: AdmissionScope | null, key: string | null, limits: RateLimits | null, slot: string | null, state: RateLimitState | null = null) {
    this.#scope = scope;
    this.#key = key;
    this.#limits = limits;
    this.#slot = slot;
    this.#state = state;
    if (scope && key !== null && slot !== null) scope.keeper.hold(key, slot);
  }

  /** False for `unmetered`: no headers, no reservation, nothing to settle; its holder may leave it out. */
  get metered(): boolean {
    return this.#scope !== null;
  }

  /** The `x-ratelimit-*` headers as of the latest take. */
  headers(): Record<string, string> {
    return this.#state ? rateLimitHeaders(this.#state) : {};
  }

  /**
   * Reserves the first model call's tokens: the gateway's estimate of its
   * input plus `max_output_tokens`. Throws the 429 when a token limit cannot
   * cover them, before anything is sent upstream.
   */
  readonly reserveTokens = async (call: TurnRequest): Promise<void> => {
    const scope = this.#scope;
    const limits = this.#limits;
    if (!scope || !limits || this.#key === null || (limits.tokensPerMinute === null && limits.tokensPerDay === null)) return;
    const tokens = (await estimateTurnTokens(call)).total + (call.maxOutputTokens ?? 0);
    let taken;
    try {
      taken = await scope.limiter.take(this.#key, limits, { requests: 0, tokens, slot: null, slotLeaseMs: SLOT_LEASE_MS });
      scope.storeWorks();
    } catch (error) {
      scope.storeFailed(error);
      return;
    }
    this.#state = taken.state;
    if (!taken.allowed) throw rateLimitRefusal(taken, tokens);
    this.#reserved = tokens;
  };

  /**
   * Settles when the engine's loop ends, with what the response used
   * (background responses included); an upstream that reported no usage
   * keeps the reservation as its charge.
   */
  readonly observer: LoopObserver = {
    responseEnded: (event) => void this.settle(event.usage?.total_tokens ?? this.#reserved),
    // Refused at once: nothing is charged but a call the upstream billed all the same.
    responseRefused: (event) => void this.settle(event.usage?.total_tokens ?? 0),
  };

  /** Charges `usedTokens` in place of the reservation and frees the slot; later calls return the first one's promise. */
  settle(usedTokens: number): Promise<void> {
    if (!this.#settlement) {
      this.#settlement = this.#settleOnce(usedTokens);
      this.#scope?.track(this.#settlement);
    }
    return this.#settlement;
  }

  /** Settled — with nothing used when no response ran (it failed before its loop began). */
  done(): Promise<void> {
    return this.#settlement ?? this.settle(0);
  }

  async #settleOnce(usedTokens: number): Promise<void> {
    const scope = this.#scope;
    if (!scope || this.#key === null || !this.#limits) return;
    if (this.#slot !== null) scope.keeper.drop(this.#key, this.#slot);
    const charge = usedTokens - this.#reserved;
    try {
      await Promise.all([charge === 0 ? null : scope.limiter.charge(this.#key, this.#limits, charge), this.#slot === null ? null : scope.limiter.release(this.#key, this.#slot)]);
    } catch (error) {
      // A slot not released lapses with its lease; a charge lost is tokens not counted.
      scope.storeFailed(error);
    }
  }
}
