import type { GatewayConfig } from '../../config/load-config.ts';
import { hasLimits, type RateLimits } from '../../store/rate-limiter.ts';
import { apiKeyId, DEFAULT_KEY_ID } from '../authenticate.ts';

/**
 * Each API key's limits: its own where it sets them, the top-level `limits`
 * for the rest (a key's `null` lifts a default). Without API keys the whole
 * gateway is one caller under the defaults. Keys whose limits are all off
 * are not metered at all.
 */
export class KeyLimits {
  readonly #byKey = new Map<string, RateLimits>();
  readonly #defaults: RateLimits;

  constructor(config: Pick<GatewayConfig, 'auth' | 'limits'>) {
    this.#defaults = { ...config.limits };
    for (const entry of config.auth.apiKeys) {
      const own = entry.limits ?? {};
      this.#byKey.set(apiKeyId(entry.key), {
        requestsPerMinute: own.requestsPerMinute !== undefined ? own.requestsPerMinute : this.#defaults.requestsPerMinute,
        tokensPerMinute: own.tokensPerMinute !== undefined ? own.tokensPerMinute : this.#defaults.tokensPerMinute,
        tokensPerDay: own.tokensPerDay !== undefined ? own.tokensPerDay : this.#defaults.tokensPerDay,
        concurrentResponses: own.concurrentResponses !== undefined ? own.concurrentResponses : this.#defaults.concurrentResponses,
      });
    }
  }

  /** The key's limits; null when it has none. */
  of(keyId: string): RateLimits | null {
    const limits = this.#byKey.get(keyId) ?? (keyId === DEFAULT_KEY_ID ? this.#defaults : null);
    return limits && hasLimits(limits) ? limits : null;
  }
}
