import { ContextLengthExceeded } from '../../errors/context-length-exceeded.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { credentialsRefused, errorFromUpstreamFrame, errorFromUpstreamStatus, modelNotFound, type RetryHeaders } from '../upstream-errors.ts';

/**
 * Google's errors are `{"error": {"code": 400, "message": …, "status":
 * "INVALID_ARGUMENT"}}`: the `status` word becomes the error's code (lower
 * case), the rest maps as for every upstream. An unknown model is a 404 whose
 * message names `models/<name>`; a wrong API key is a 400 whose ErrorInfo
 * reason is `API_KEY_INVALID` — the gateway's credentials, not the client's request.
 */
export function errorFromGeminiStatus(provider: string, status: number, bodyText: string, retry: RetryHeaders): GatewayError {
  const body = parseGoogleError(bodyText);
  if (status === 404 && body?.message && /\bmodels\/\S+/.test(body.message)) return modelNotFound(provider, body.message);
  if (status === 400 && body?.reasons.includes('API_KEY_INVALID')) return credentialsRefused(provider, 'API_KEY_INVALID');
  const tooLong = status === 400 && body?.message ? inputTooLong(body.message) : null;
  if (tooLong) return tooLong;
  if (status >= 500 && body?.status) return geminiServerError(provider, body.status.toLowerCase(), body.message ?? `status ${status}`, retry);
  const normalised = body ? JSON.stringify({ error: { message: body.message, code: body.status?.toLowerCase() ?? null } }) : bodyText;
  // Google says when to come back in the body (RetryInfo's retryDelay, "37s"), not in a header.
  const delay = body?.retryDelayMs ?? null;
  return errorFromUpstreamStatus(provider, status, normalised, delay !== null && !retry['retry-after'] && !retry['retry-after-ms'] ? { 'retry-after-ms': String(delay), 'retry-after': String(Math.ceil(delay / 1000)) } : retry);
}

/** An error inside the stream's first frame, after a 200. */
export function errorFromGeminiFrame(provider: string, code: string, message: string): GatewayError {
  if (code === 'unavailable') return geminiServerError(provider, code, message, {});
  const mapped = code === 'resource_exhausted' ? 'rate_limit_exceeded' : code === 'invalid_argument' ? 'invalid_request_error' : code;
  return errorFromUpstreamFrame(provider, mapped, message);
}

/**
 * Google's own failures, answered as a status or in the stream's first frame
 * alike: the status word is the code either way. `UNAVAILABLE` is Google's
 * "the model is overloaded", a 503 with a retry hint, as Anthropic's overload
 * is (the SDKs wait it out and retry); anything else a 502.
 */
function geminiServerError(provider: string, code: string, message: string, retry: RetryHeaders): GatewayError {
  const reported = `The upstream '${provider}' failed: ${message}`;
  if (code === 'unavailable') return new GatewayError({ status: 503, type: 'server_error', code, message: reported, headers: { 'retry-after': '2', ...retry }, upstreamRetry: retry });
  return new GatewayError({ status: 502, type: 'upstream_error', code, message: reported, headers: { ...retry }, upstreamRetry: retry });
}

/** Gemini's refusal of a prompt over the model's window: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)." */
function inputTooLong(message: string): ContextLengthExceeded | null {
  const sizes = /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i.exec(message);
  // Gemini's limit is on the input: the output has its own (outputTokenLimit).
  return sizes ? new ContextLengthExceeded(message, { window: Number(sizes[2]), inputTokens: Number(sizes[1]), outputTokens: null, inputOnly: true }) : null;
}

function parseGoogleError(text: string): { message?: string; status?: string; reasons: string[]; retryDelayMs?: number } | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    // Some Google front ends answer with a one-element array of the error object.
    const body = (Array.isArray(parsed) ? parsed[0] : parsed) as { error?: { message?: unknown; status?: unknown; details?: unknown } } | null;
    const error = body?.error;
    if (!error || typeof error !== 'object') return null;
    const details = (Array.isArray(error.details) ? error.details : []) as ({ reason?: unknown; retryDelay?: unknown } | null)[];
    const reasons = details.flatMap((detail) => (typeof detail?.reason === 'string' ? [detail.reason] : []));
    const retryDelayMs = details.map((detail) => durationMs(detail?.retryDelay)).find((delay) => delay !== null);
    return { ...(typeof error.message === 'string' && { message: error.message }), ...(typeof error.status === 'string' && { status: error.status }), reasons, ...(retryDelayMs != null && { retryDelayMs }) };
  } catch {
    return null;
  }
}

/** A protobuf Duration as JSON writes it ("37s", "1.5s") in milliseconds; null for anything else. */
function durationMs(value: unknown): number | null {
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value) : null;
  return match ? Math.ceil(Number(match[1]) * 1000) : null;
}

/** A body that is not the GenerateContentResponse it should be. */
export function unreadableGeminiBody(provider: string, why: string): GatewayError {
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a response the gateway could not read: ${why}.` });
}
