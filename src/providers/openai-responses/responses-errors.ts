import { GatewayError } from '../../errors/gateway-error.ts';
import { errorFromUpstreamStatus } from '../upstream-errors.ts';

/**
 * As for Chat Completions, except that the Responses API refuses an unknown
 * model with a 400 `model_not_found`: that is the client's 404, as from every
 * other upstream.
 */
export function errorFromResponsesStatus(provider: string, status: number, bodyText: string, retryAfter: string | null): GatewayError {
  return errorFromUpstreamStatus(provider, status === 400 && errorCodeOf(bodyText) === 'model_not_found' ? 404 : status, bodyText, retryAfter);
}

function errorCodeOf(bodyText: string): unknown {
  try {
    return (JSON.parse(bodyText) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return undefined;
  }
}

export function invalidResponsesBody(provider: string, cause: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    message: `The upstream '${provider}' sent a response the gateway could not read.`,
    cause,
  });
}
