import { GatewayError } from '../../errors/gateway-error.ts';
import { errorFromUpstreamFrame, errorFromUpstreamStatus, modelNotFound } from '../upstream-errors.ts';

/**
 * Google's errors are `{"error": {"code": 400, "message": …, "status":
 * "INVALID_ARGUMENT"}}`: the `status` word becomes the error's code (lower
 * case), the rest maps as for every upstream. An unknown model is a 404 whose
 * message names `models/<name>`.
 */
export function errorFromGeminiStatus(provider: string, status: number, bodyText: string, retryAfter: string | null): GatewayError {
  const body = parseGoogleError(bodyText);
  if (status === 404 && body?.message && /\bmodels\/\S+/.test(body.message)) return modelNotFound(provider, body.message);
  const normalised = body ? JSON.stringify({ error: { message: body.message, code: body.status?.toLowerCase() ?? null } }) : bodyText;
  return errorFromUpstreamStatus(provider, status, normalised, retryAfter);
}

/** An error inside the stream's first frame, after a 200. */
export function errorFromGeminiFrame(provider: string, code: string, message: string): GatewayError {
  const mapped = code === 'resource_exhausted' ? 'rate_limit_exceeded' : code === 'invalid_argument' ? 'invalid_request_error' : code;
  return errorFromUpstreamFrame(provider, mapped, message);
}

function parseGoogleError(text: string): { message?: string; status?: string } | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    // Some Google front ends answer with a one-element array of the error object.
    const body = (Array.isArray(parsed) ? parsed[0] : parsed) as { error?: { message?: unknown; status?: unknown } } | null;
    const error = body?.error;
    if (!error || typeof error !== 'object') return null;
    return { ...(typeof error.message === 'string' && { message: error.message }), ...(typeof error.status === 'string' && { status: error.status }) };
  } catch {
    return null;
  }
}

/** A body that is not the GenerateContentResponse it should be. */
export function unreadableGeminiBody(provider: string, why: string): GatewayError {
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a response the gateway could not read: ${why}.` });
}
