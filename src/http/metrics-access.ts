import { timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.ts';
import { bearerToken, credentialDigest } from './bearer-credentials.ts';

/** Who may scrape a `/metrics` endpoint: returns the refusal, or null to serve. */
export type MetricsAccess = (authorization: string | undefined) => GatewayError | null;

/**
 * The rule for one listener: with `metrics.token` configured, a scrape must
 * send it as a bearer token (compared as digests, in constant time); without
 * one, scrapes are open — except where `locked` (the main port while API keys
 * are on), where nobody may read every tenant's figures: the operator sets a
 * token or a port of its own.
 */
export function metricsAccess(token: string | null, locked: boolean): MetricsAccess {
  if (token === null) {
    if (!locked) return () => null;
    const refusal = new GatewayError({
      status: 403,
      type: 'permission_error',
      code: 'metrics_token_required',
      message: 'API keys are configured, so /metrics on this port needs its own token: set metrics.token (METRICS_TOKEN) and send it as "Authorization: Bearer <token>", or serve metrics on a port of their own (metrics.port, METRICS_PORT).',
    });
    return () => refusal;
  }
  const expected = credentialDigest(token);
  return (authorization) => {
    const presented = bearerToken(authorization);
    if (presented !== null && timingSafeEqual(credentialDigest(presented), expected)) return null;
    return new GatewayError({ status: 401, type: 'authentication_error', code: 'invalid_metrics_token', message: 'Missing or invalid metrics token. Send it as "Authorization: Bearer <token>".' });
  };
}
