import { ANSWER_TOO_LARGE } from './upstream-answer-limits.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { contextLengthError } from './context-length-errors.ts';
import type { TurnEvent } from './provider.ts';
import { errorWord, parseErrorBody, statedStatus, truncate, withFailedGeneration } from './upstream-error-bodies.ts';

/**
 * How upstream failures reach clients: the upstream's own 4xx passes through
 * with its message (the client can fix its request); 5xx, unreachable hosts and
 * timeouts become 502/504 with stable codes. Raw upstream bodies beyond the
 * message are never forwarded, and nothing here carries credentials.
 */

/**
 * How long the upstream asked to be left alone, as it said it: passed on with
 * its 429 (and other 4xx), since the SDKs wait `retry-after-ms` when given,
 * else `retry-after`, before they retry.
 */
export type RetryHeaders = Partial<Record<'retry-after' | 'retry-after-ms' | 'x-should-retry', string>>;

/** The upstream answer's `retry-after` and `retry-after-ms`, those it sent, and its `x-should-retry: false` (no retry will do: the SDKs read it first). */
export function retryHeadersOf(header: (name: string) => unknown): RetryHeaders {
  const found: RetryHeaders = {};
  for (const name of ['retry-after', 'retry-after-ms'] as const) {
    const value = header(name);
    if (typeof value === 'string' && value !== '') found[name] = value;
  }
  if (header('x-should-retry') === 'false') found['x-should-retry'] = 'false';
  return found;
}

/** `paramOf`: the field an upstream names, as the client's request names it (a wire that calls it otherwise). */
export function errorFromUpstreamStatus(provider: string, status: number, bodyText: string, retry: RetryHeaders, paramOf: (param: string) => string = (param) => param): GatewayError {
  const parsed = parseErrorBody(bodyText);
  const refused = refusedContent(status, parsed.message);
  if (refused) return refused;
  const misconfigured = misconfigurationError(provider, status, parsed.code, parsed.message);
  if (misconfigured) return misconfigured;
  if (status === 404) return modelNotFound(provider, parsed.message, parsed.type);
  const tooLong = status === 400 || status === 413 || status === 422 ? contextLengthError(parsed.message ?? '', [parsed.code, parsed.type]) : null;
  if (tooLong) return tooLong;
  if (status >= 400 && status < 500) {
    return new GatewayError({
      status,
      type: parsed.type ?? defaultTypeFor(status),
      code: parsed.code,
      param: parsed.param === null ? null : paramOf(parsed.param),
      message: parsed.message ?? `The upstream '${provider}' rejected the request with status ${status}.`,
      headers: { ...retry },
    });
  }
  // A gateway or proxy in front of the model server (nginx, a load balancer) that timed out waiting for it.
  if (status === 504) {
    return new GatewayError({ status: 504, type: 'upstream_error', code: 'upstream_timeout', message: `The upstream '${provider}' timed out (a 504 from it, or from a proxy in front of it)${parsed.message ? `: ${parsed.message}` : '.'}`, headers: { ...retry }, upstreamRetry: retry });
  }
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_error',
    message: `The upstream '${provider}' failed with status ${status}${parsed.message ? `: ${parsed.message}` : '.'}`,
    // When the upstream says when to come back (a 503 in maintenance), the client and routing wait that long.
    headers: { ...retry },
    upstreamRetry: retry,
  });
}

/**
 * A refusal of what the client sent, in words a moderation layer uses
 * (OpenRouter's 403 "Your chosen model requires moderation and your input
 * was flagged", z.ai's "Content security warning" in its stream): the
 * client's to see, as the 400 `content_filter` Azure's prompt filter is,
 * not a 403 the gateway would read as its credentials refused (a 502 routing
 * and SDKs retry). `status` null: said in a stream, with no status.
 */
export function refusedContent(status: number | null, message: string | null): GatewayError | null {
  if ((status !== 403 && status !== null) || !message || !CONTENT_REFUSAL.test(message)) return null;
  return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'content_filter', message: truncate(message) });
}

const CONTENT_REFUSAL = /\b(?:flagged|moderation|content (?:policy|filter|security|safety|violates)|unsafe content|safety (?:system|filter|check)|usage guidelines)\b/i;

/**
 * For an endpoint the gateway only tries (a count of input tokens, which a
 * server of the wire may lack: vLLM's Responses API answers 405, others
 * 404): its answer as a missing endpoint, which the caller does without,
 * rather than a wrong base URL or the client's bad request; null when the
 * answer is not that (a 404 about the model stays one).
 */
export function missingEndpoint(provider: string, status: number, mapped: GatewayError): GatewayError | null {
  if (status !== 405 && !(status === 404 && mapped.code === 'upstream_not_found')) return null;
  return new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_endpoint_missing', message: `The upstream '${provider}' has no such endpoint (status ${status}).`, headers: { ...NOT_RETRIED } });
}

/**
 * The upstream refused what the gateway itself is configured with — its
 * credentials (401/403), or its base URL (a 404 that is not about the
 * model) — so the client must not see its own 401 or a 404 for
 * `POST /v1/responses`: a 502 that names the provider, for the operator to fix.
 */
export function misconfigurationError(provider: string, status: number, code: string | null, message: string | null): GatewayError | null {
  if (status === 401 || status === 403) return credentialsRefused(provider, `status ${status}`);
  if (status === 404 && !isAboutTheModel(code, message)) {
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_not_found',
      message: `The upstream '${provider}' answered 404 Not Found: the base URL configured for this provider looks wrong.`,
      headers: { ...NOT_RETRIED },
    });
  }
  return null;
}

/**
 * An upstream that redirects the gateway's request (a base URL on `http://`
 * where the server wants `https://`, or missing a path prefix): the gateway
 * follows no redirect (a `POST` redirected with 301/302 becomes a `GET`
 * elsewhere), so the operator is told where it points.
 */
export function redirectRefused(provider: string, status: number, location: string | null): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_redirected',
    message: `The upstream '${provider}' redirected the gateway's request (${status}${location ? ` to ${location}` : ''}): the base URL configured for this provider should be the address it redirects to.`,
    headers: { ...NOT_RETRIED },
  });
}

/**
 * A 5xx the SDKs would retry, though nothing changes until the operator
 * fixes the configuration: each retry would only cost another upstream call
 * and the client its backoff. (`x-should-retry` is what the OpenAI and
 * Anthropic SDKs read before the status.)
 */
const NOT_RETRIED = { 'x-should-retry': 'false' } as const;

/** The upstream refused the gateway's own credentials (`why`: how it said so). */
export function credentialsRefused(provider: string, why: string): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_auth_failed',
    message: `The upstream '${provider}' refused the gateway's credentials (${why}); the gateway's configuration for this provider needs fixing.`,
    headers: { ...NOT_RETRIED },
  });
}

/** An upstream 404 about the model the client asked for: the client can fix that. */
export function modelNotFound(provider: string, message: string | null, type: string | null = null): GatewayError {
  return new GatewayError({
    status: 404,
    type: type ?? 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: message ?? `The upstream '${provider}' does not know the requested model.`,
  });
}

function isAboutTheModel(code: string | null, message: string | null): boolean {
  return code === 'model_not_found' || /\bmodel\b/i.test(message ?? '');
}

/**
 * An error the upstream reported inside its first stream frame, after a 200
 * (or in a 200 body): what the same refusal as an HTTP status would have
 * been. Servers that state that status in the error (`status_code`, or a
 * number in `code`: llama.cpp, vLLM, Groq) are taken at their word, so a
 * request the upstream refused is the client's 400 (which SDKs do not
 * retry), not a 502. A rate limit is a 429 carrying the delay its message
 * names ("Please try again in 2.5s") as `retry-after`, since clients wait
 * only as long as a header says (Codex gives up on a 429 without one); a
 * spent quota is OpenAI's 429 `insufficient_quota`, which clients show rather than retry.
 */
export function errorFromUpstreamFrame(provider: string, code: string, message: string, status?: number, param?: string, paramOf?: (param: string) => string): GatewayError {
  const tooLong = contextLengthError(truncate(message), [code]);
  if (tooLong) return tooLong;
  const reported = `The upstream '${provider}' reported: ${truncate(message)}`;
  if (code === 'insufficient_quota') return new GatewayError({ status: 429, type: 'insufficient_quota', code, message: reported });
  if (code === 'rate_limit_exceeded' || status === 429) {
    const delayMs = retryDelayInText(message);
    return new GatewayError({ status: 429, type: 'rate_limit_error', code, message: reported, ...(delayMs !== null && { headers: { 'retry-after': String(Math.ceil(delayMs / 1000)), 'retry-after-ms': String(delayMs) } }) });
  }
  if (status !== undefined) return errorFromUpstreamStatus(provider, status, JSON.stringify({ error: { message, code, param } }), {}, paramOf);
  const refused = code === 'invalid_request_error' ? 400 : 502;
  return new GatewayError({ status: refused, type: refused === 502 ? 'upstream_error' : 'invalid_request_error', code, message: reported, ...(refused === 400 && param !== undefined && { param: paramOf ? paramOf(param) : param }) });
}

/** The wait a rate-limit message names, as OpenAI words it ("try again in 2.5s", "in 640ms", "in 1m30s" reads its first part), in ms. */
function retryDelayInText(message: string): number | null {
  const found = /try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?|m|minutes?)\b/i.exec(message);
  if (!found) return null;
  const amount = Number(found[1]);
  const unit = found[2]!.toLowerCase();
  const ms = unit === 'ms' ? amount : unit.startsWith('m') ? amount * 60_000 : amount * 1000;
  return Number.isFinite(ms) ? Math.max(0, Math.round(ms)) : null;
}

/** Maps a transport failure (connect, timeout, reset) to a GatewayError. */
export function errorFromTransport(provider: string, error: unknown): GatewayError {
  const code = transportCode(error);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return upstreamTimedOut(provider, `The upstream '${provider}' did not answer in time.`, error);
  }
  if (code === ANSWER_TOO_LARGE) {
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_invalid_response',
      message: `The upstream '${provider}' sent ${(error as Error).message}; the gateway read no more of it.`,
      cause: error,
    });
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_unreachable',
      message: `The upstream '${provider}' could not be reached (${code}).`,
      cause: error,
    });
  }
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_connection_error',
    message: `The connection to the upstream '${provider}' failed${code ? ` (${code})` : ''}.`,
    cause: error,
  });
}

/** A 504 `upstream_timeout`: one of the provider's time bounds ran out. */
export function upstreamTimedOut(provider: string, message: string, cause?: unknown): GatewayError {
  return new GatewayError({ status: 504, type: 'upstream_error', code: 'upstream_timeout', message, cause });
}

/** The most specific error code along the cause chain (undici wraps socket errors); null when none has one. */
export function transportCode(error: unknown): string | null {
  let found: string | null = null;
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      found = code;
      if (code !== 'UND_ERR_SOCKET') return code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * An error object an upstream sent where an answer should be (a stream frame,
 * a 200 body), as a turn's `error` event: its code a word a client can act on
 * (its own `code`, else its `type` when that is such a word, else what its
 * stated status says), never a bare status number; the status it states, if
 * any, so the refusal is answered with it (`errorFromUpstreamFrame`).
 */
export function errorEventFrom(error: { code?: unknown; type?: unknown; message?: unknown; param?: unknown; status_code?: unknown; status?: unknown; failed_generation?: unknown }): Extract<TurnEvent, { type: 'error' }> {
  const stated = statedStatus(error);
  const status = stated ?? (error.type === 'invalid_request_error' ? 400 : null);
  const message = withFailedGeneration(typeof error.message === 'string' && error.message ? error.message : UNSAID, error.failed_generation);
  return { type: 'error', code: errorWord(error) ?? codeForStatus(error.type, status), message, ...(status !== null && { status }), ...(typeof error.param === 'string' && error.param !== '' && { param: error.param }) };
}

export const UNSAID = 'The upstream reported an error.';

/** A code for an error that names none but its type or status: the type when it is a code's kind of word, else what the status says. */
function codeForStatus(type: unknown, status: number | null): string {
  if (typeof type === 'string' && /^[a-z]+(?:_[a-z]+)*$/.test(type)) return type;
  if (status === 429) return 'rate_limit_exceeded';
  return status !== null && status < 500 ? 'invalid_request_error' : 'upstream_error';
}

export function defaultTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return 'invalid_request_error';
}

/** What providers log with: pino's shape, so providers stay free of Fastify. */
export interface ProviderLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

