import { randomUUID } from 'node:crypto';
import type { DeploymentLimiter, DeploymentLimits, LimitAdmission } from '../../providers/routing/deployment-limits.ts';
import type { RateLimiter, RateLimits } from '../../store/rate-limiter.ts';
import { SLOT_LEASE_MS, SlotKeeper } from './slot-keeper.ts';

interface UpstreamLimiterLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

const UNMETERED: LimitAdmission = { allowed: true, permit: { settle() {} } };

/**
 * Provider entries' outbound limits counted in the clients' rate-limit store
 * (memory, or Redis for every replica), under keys of their own
 * (`upstream:<provider>`) beside the API keys'. A store that fails lets
 * calls through unmetered, said once in the log.
 */
export class UpstreamLimiter implements DeploymentLimiter {
  readonly #limiter: RateLimiter;
  readonly #keeper: SlotKeeper;
  readonly #log: UpstreamLimiterLogger;
  #failing = false;

  constructor(options: { limiter: RateLimiter; log: UpstreamLimiterLogger }) {
    this.#limiter = options.limiter;
    this.#log = options.log;
    this.#keeper = new SlotKeeper(options.limiter, (error) => this.#storeFailed(error));
  }

  async admit(provider: string, limits: DeploymentLimits, estimatedTokens: number): Promise<LimitAdmission> {
    const key = `upstream:${provider}`;
    const rateLimits: RateLimits = { requestsPerMinute: limits.requestsPerMinute, tokensPerMinute: limits.tokensPerMinute, tokensPerDay: null, concurrentResponses: limits.concurrentRequests };
    const slot = limits.concurrentRequests === null ? null : randomUUID();
    let taken;
    try {
      taken = await this.#limiter.take(key, rateLimits, { requests: 1, tokens: estimatedTokens, slot, slotLeaseMs: SLOT_LEASE_MS });
      this.#storeWorks();
    } catch (error) {
      this.#storeFailed(error);
      return UNMETERED;
    }
    if (!taken.allowed) return { allowed: false, limit: taken.limit === 'tokens_day' ? 'tokens' : taken.limit, retryAfterMs: taken.retryAfterMs };
    if (slot !== null) this.#keeper.hold(key, slot);
    return {
      allowed: true,
      permit: {
        settle: (usedTokens) => {
          if (slot !== null) {
            this.#keeper.drop(key, slot);
            this.#limiter.release(key, slot).catch((error: unknown) => this.#storeFailed(error));
          }
          if (limits.tokensPerMinute !== null && usedTokens !== null && usedTokens !== estimatedTokens) {
            this.#limiter.charge(key, rateLimits, usedTokens - estimatedTokens).catch((error: unknown) => this.#storeFailed(error));
          }
        },
      },
    };
  }

  close(): void {
    this.#keeper.close();
  }

  #storeFailed(error: unknown): void {
    if (!this.#failing) this.#log.warn({ err: error }, 'upstream limits: the limiter store failed; model calls pass unmetered until it answers again');
    this.#failing = true;
  }

  #storeWorks(): void {
    if (this.#failing) this.#log.info({}, 'upstream limits: the limiter store answers again');
    this.#failing = false;
  }
}
