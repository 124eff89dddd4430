import { GatewayError } from '../../errors/gateway-error.ts';
import { errorFromUpstreamStatus, type RetryHeaders } from '../upstream-errors.ts';

/**
 * As for Chat Completions, except that the Responses API refuses an unknown
 * model with a 400 `model_not_found`: that is the client's 404, as from every
 * other upstream.
 */
export function errorFromResponsesStatus(provider: string, status: number, bodyText: string, retry: RetryHeaders): GatewayError {
  return errorFromUpstreamStatus(provider, status === 400 && errorCodeOf(bodyText) === 'model_not_found' ? 404 : status, bodyText, retry);
}

function errorCodeOf(bodyText: string): unknown {
  try {
    return (JSON.parse(bodyText) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return undefined;
  }
}
