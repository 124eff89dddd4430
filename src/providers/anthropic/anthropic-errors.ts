import Anthropic from '@anthropic-ai/sdk';
import { GatewayError } from '../../errors/gateway-error.ts';
import { contextLengthError } from '../context-length-errors.ts';
import { errorFromTransport, misconfigurationError, modelNotFound, retryHeadersOf, transportCode, type RetryHeaders } from '../upstream-errors.ts';

/** HTTP statuses for Anthropic's error types, for errors that arrive inside a stream. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  overloaded_error: 503,
  api_error: 502,
  timeout_error: 504,
};

/**
 * Maps what the Anthropic SDK throws to the gateway's errors: 4xx pass through
 * with Anthropic's message (and `param` when the message names a field),
 * overload (529, or an `overloaded_error` event) is a 503 with a retry hint,
 * other server errors 502, connection problems 502/504.
 */
export function errorFromAnthropic(provider: string, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof Anthropic.APIConnectionTimeoutError) return errorFromTransport(provider, Object.assign(new Error(error.message), { code: 'ETIMEDOUT' }));
  if (error instanceof Anthropic.APIConnectionError) return errorFromTransport(provider, error.cause ?? error);
  if (error instanceof Anthropic.APIError) {
    const body = error.error as { error?: { type?: string; message?: string } } | undefined;
    const type = body?.error?.type ?? null;
    const message = body?.error?.message ?? error.message;
    // Routing (providers/routing/) waits or cools a deployment down by it.
    // Not `instanceof Headers`: the fetch the provider hands the SDK (undici's) has its own Headers class.
    const headers = error.headers as { get?: (name: string) => string | null } | undefined;
    const retry = typeof headers?.get === 'function' ? retryHeadersOf((name) => headers.get!(name)) : {};
    return errorFromAnthropicType(provider, type, message, error.status ?? null, retry);
  }
  // The SDK lets transport failures while reading a stream through as they are (undici's `terminated`, its cause a body timeout or a reset).
  if (transportCode(error)) return errorFromTransport(provider, error);
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: `The upstream '${provider}' failed.`, cause: error });
}

export function errorFromAnthropicType(provider: string, type: string | null, message: string, httpStatus: number | null, retry: RetryHeaders = {}): GatewayError {
  const status = httpStatus ?? (type ? STATUS_BY_TYPE[type] : undefined) ?? 502;
  const misconfigured = misconfigurationError(provider, status, type, message);
  if (misconfigured) return misconfigured;
  if (status === 404) return modelNotFound(provider, message);
  if (status === 529 || type === 'overloaded_error') {
    return new GatewayError({ status: 503, type: 'server_error', code: 'upstream_overloaded', message: `The upstream '${provider}' is overloaded: ${message}`, headers: { 'retry-after': '2', ...retry }, upstreamRetry: retry });
  }
  const tooLong = status === 400 || status === 413 ? contextLengthError(message, [type]) : null;
  if (tooLong) return tooLong;
  if (status >= 400 && status < 500) {
    const param = /^([a-z_]+(?:\.[A-Za-z0-9_]+)+):\s/.exec(message)?.[1] ?? null;
    return new GatewayError({ status, type: type === 'invalid_request_error' || !type ? 'invalid_request_error' : type, code: type, param, message, ...(status === 429 && { headers: { ...retry } }) });
  }
  if (status === 504) return new GatewayError({ status: 504, type: 'upstream_error', code: 'upstream_timeout', message: `The upstream '${provider}' timed out: ${message}` });
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: `The upstream '${provider}' failed with status ${status}: ${message}` });
}
