import Anthropic from '@anthropic-ai/sdk';
import { GatewayError } from '../../errors/gateway-error.ts';
import { contextLengthError } from '../context-length-errors.ts';
import { defaultTypeFor, errorFromTransport, errorFromUpstreamFrame, misconfigurationError, modelNotFound, refusedContent, retryHeadersOf, transportCode, type RetryHeaders } from '../upstream-errors.ts';
import { errorWord } from '../upstream-error-bodies.ts';

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
    const body = error.error as { error?: { type?: unknown; message?: unknown; code?: unknown } } | undefined;
    // Servers that speak Anthropic's API for other models (OpenRouter, z.ai, …) name their errors by `code`, not `type`.
    const type = typeof body?.error?.type === 'string' ? body.error.type : body?.error ? errorWord(body.error) : null;
    const message = typeof body?.error?.message === 'string' ? body.error.message : error.message;
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
  const stated = httpStatus ?? (type ? STATUS_BY_TYPE[type] : undefined) ?? null;
  const refused = refusedContent(stated, message);
  if (refused) return refused;
  // An error in the stream that names no kind Anthropic has: what it said, not a status it never had.
  if (stated === null) return errorFromUpstreamFrame(provider, type ?? 'upstream_error', message);
  const status = stated;
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
    return new GatewayError({ status, type: type ?? defaultTypeFor(status), code: type ?? (status === 429 ? 'rate_limit_exceeded' : null), param, message, ...(status === 429 && { headers: { ...retry } }) });
  }
  if (status === 504) return new GatewayError({ status: 504, type: 'upstream_error', code: 'upstream_timeout', message: `The upstream '${provider}' timed out: ${message}` });
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: `The upstream '${provider}' failed with status ${status}: ${message}` });
}
