import type { GatewayConfig } from './load-config.ts';

/**
 * Whether requests are measured in tokens before their first model call: a
 * token limit of the gateway, of an API key, or of an upstream's key. The
 * tokenizer is then loaded at start-up, since loading it stalls the event
 * loop for up to seconds on a small machine — on the first request, that
 * stall times out the Redis commands in flight (limits among them, which
 * then let the burst through unmetered).
 */
export function measuresTokensUpFront(config: Pick<GatewayConfig, 'limits' | 'auth' | 'providers'>): boolean {
  const limitsTokens = (limits: { tokensPerMinute?: number | null; tokensPerDay?: number | null } | undefined) => limits != null && (limits.tokensPerMinute != null || limits.tokensPerDay != null);
  return limitsTokens(config.limits) || config.auth.apiKeys.some((entry) => limitsTokens(entry.limits)) || Object.values(config.providers).some((provider) => limitsTokens(provider.limits));
}
