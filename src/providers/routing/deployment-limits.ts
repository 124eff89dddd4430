import { GatewayError } from '../../errors/gateway-error.ts';

/** One provider entry's outbound limits (one API key's, config `providers.<name>.limits`); null: that limit is off. */
export interface DeploymentLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

/** Which limit refused a call. */
export type DeploymentLimitName = 'requests' | 'tokens' | 'concurrency';

/** A call the limits let through: told once what it really used when it ends, which also frees its concurrency slot. */
export interface LimitPermit {
  /** `usedTokens`: the call's input and output tokens as the upstream reported them; null when it reported none (the reservation stands). */
  settle(usedTokens: number | null): void;
}

export type LimitAdmission = { allowed: true; permit: LimitPermit } | { allowed: false; limit: DeploymentLimitName; retryAfterMs: number | null };

/**
 * Counts model calls against the limits of the provider entry making them,
 * in the store every replica shares. Implementations never throw: limits
 * that cannot be read let the call through, so a store outage never stops
 * the model calls.
 */
export interface DeploymentLimiter {
  /** Takes one request, `estimatedTokens` of the token limit and a concurrency slot, all or nothing. */
  admit(provider: string, limits: DeploymentLimits, estimatedTokens: number): Promise<LimitAdmission>;
}

export function hasDeploymentLimits(limits: DeploymentLimits | null | undefined): limits is DeploymentLimits {
  return !!limits && (limits.requestsPerMinute !== null || limits.tokensPerMinute !== null || limits.concurrentRequests !== null);
}

const WORDING: Record<DeploymentLimitName, string> = { requests: 'requests per minute', tokens: 'tokens per minute', concurrency: 'concurrent requests' };

/**
 * A model call refused by the gateway's own limits of the upstream key that
 * would serve it: nothing was sent. Routing moves on to another deployment;
 * when none is left the client gets this 429, as OpenAI words its own.
 */
export class DeploymentAtLimit extends GatewayError {
  /** When the call could pass; null when it never can (a limit of 0, or more tokens than the limit). */
  readonly retryAfterMs: number | null;

  constructor(message: string, retryAfterMs: number | null) {
    const headers: Record<string, string> =
      retryAfterMs === null ? { 'x-should-retry': 'false' } : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1_000))), 'retry-after-ms': String(retryAfterMs) };
    super({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message, headers });
    this.retryAfterMs = retryAfterMs;
  }

  /** One provider entry refused the call. */
  static of(provider: string, refusal: { limit: DeploymentLimitName; retryAfterMs: number | null }): DeploymentAtLimit {
    const when = refusal.retryAfterMs === null ? 'It cannot pass at this limit.' : `Try again in ${Math.max(1, Math.ceil(refusal.retryAfterMs / 1_000))}s.`;
    return new DeploymentAtLimit(`The upstream '${provider}' is at its limit of ${WORDING[refusal.limit]}. ${when}`, refusal.retryAfterMs);
  }

  /** Every deployment of `alias` refused the call: the soonest any of them could take it. */
  static ofAll(alias: string, refusals: readonly DeploymentAtLimit[]): DeploymentAtLimit {
    const waits = refusals.map((refusal) => refusal.retryAfterMs).filter((wait) => wait !== null);
    const soonest = waits.length > 0 ? Math.min(...waits) : null;
    const when = soonest === null ? 'It cannot pass at these limits.' : `Try again in ${Math.max(1, Math.ceil(soonest / 1_000))}s.`;
    return new DeploymentAtLimit(`Every deployment of the model '${alias}' is at its rate limit. ${when}`, soonest);
  }
}
