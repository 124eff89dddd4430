import { ContextLengthExceeded } from '../../errors/context-length-exceeded.ts';
import { GatewayError } from '../../errors/gateway-error.ts';

/** What to do after a deployment refused a call before any output. */
export type FailoverDecision =
  /** Try another deployment (or this one again after a pause); `retryAfterMs` when the upstream said how long to wait. */
  | { kind: 'retry'; retryAfterMs: number | null }
  /** The input is too long for the model: only a larger-context model can help. */
  | { kind: 'context-length' }
  /** The request itself is at fault (or the caller gave up): another deployment would refuse it too. */
  | { kind: 'give-up' };

/**
 * Connection errors, timeouts, 429, 5xx and an overloaded answer are the
 * upstream's trouble, and another deployment may serve the call; a 4xx is
 * the request's, and would be refused everywhere. A 5xx that says when to
 * come back (a 503 in maintenance, Anthropic's overload) is waited for as a
 * 429's `retry-after` is.
 */
export function decideFailover(error: unknown): FailoverDecision {
  if (error instanceof ContextLengthExceeded) return { kind: 'context-length' };
  if (!(error instanceof GatewayError)) return { kind: 'give-up' };
  // A 429's headers are the upstream's; beside a 5xx they may be the gateway's own suggestion to the client.
  if (error.status === 429) return { kind: 'retry', retryAfterMs: waitAskedFor(error.upstreamRetry ?? error.headers) };
  if (error.status >= 500) return { kind: 'retry', retryAfterMs: error.upstreamRetry ? waitAskedFor(error.upstreamRetry) : null };
  return { kind: 'give-up' };
}

/** How long an upstream's refusal asked to wait: `retry-after-ms`, else `retry-after`; null when it did not say. */
function waitAskedFor(headers: Readonly<Record<string, string | undefined>>): number | null {
  const milliseconds = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] && Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);
  return retryAfterMs(headers['retry-after']);
}

/** `retry-after` in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
