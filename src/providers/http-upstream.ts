import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { GatewayError } from '../errors/gateway-error.ts';
import { invalidUpstreamBody } from './invalid-upstream-body.ts';
import { traceHeaders, type TraceContext } from '../util/trace-context.ts';
import { MisconfigurationReport } from './misconfiguration-report.ts';
import { errorFromTransport, missingEndpoint, redirectRefused, retryHeadersOf, transportCode, type ProviderLogger, type RetryHeaders } from './upstream-errors.ts';
import { ANSWER_TOO_LARGE } from './upstream-answer-limits.ts';
import { outboundProxyConfigured, proxiedDispatcher } from './outbound-proxy.ts';
import { WholeAnswerFailure, WholeBodyHandler, type WholeAnswer } from './whole-body-handler.ts';

/**
 * How long a pooled upstream connection may sit idle before the gateway
 * closes it: undici's own default, under the 5 s after which Node, uvicorn
 * (vLLM) and llama.cpp close one without saying so in a `Keep-Alive` header.
 * Kept longer, a request sent as the server closed its connection met a reset
 * and became a 502; an upstream that names its own timeout is kept to that.
 */
export const IDLE_CONNECTION_MS = 4_000;

/** How a provider reaches its upstream over HTTP; the same keys for every HTTP provider. */
export interface UpstreamConnectionOptions {
  name: string;
  /** Base URL including any API prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Upper bound on pooled connections to the upstream. */
  connections: number;
  connectTimeoutMs: number;
  /** How long the upstream may take to send response headers. */
  firstByteTimeoutMs: number;
  /** How long a started stream may stay silent. */
  idleTimeoutMs: number;
  /** Where upstream refusals of the gateway's own configuration are logged. */
  log?: ProviderLogger;
}

/** An endpoint every server of the wire has, or one the gateway tries and does without (a 404 from it says nothing of the base URL). */
export type EndpointKind = 'required' | 'optional';

/** Turns an upstream's HTTP error answer into the gateway's error; each wire has its own error body. */
export type StatusErrorMapper = (provider: string, status: number, bodyText: string, retry: RetryHeaders) => GatewayError;

export interface HttpUpstreamOptions extends UpstreamConnectionOptions {
  /** Appended to the base URL's path before every request path (Gemini's API version). */
  pathPrefix?: string;
  /** Query parameters every request carries (Azure OpenAI's `api-version`). */
  query?: Readonly<Record<string, string>>;
  errorFromStatus: StatusErrorMapper;
}

/**
 * One upstream reached through an undici pool: measured, the pool carries
 * several times the requests per second of the global `fetch`. Requests come
 * back only when the upstream answered below 300 (a redirect is the base URL's mistake); transport failures and error
 * statuses are thrown as `GatewayError`s, unless the caller aborted.
 */
export class HttpUpstream {
  readonly #options: HttpUpstreamOptions;
  /** A pool to the upstream's origin; with an outbound proxy in the environment, an agent going through it (which needs each request's `origin`). */
  readonly #pool: Dispatcher;
  readonly #origin: string;
  readonly #basePath: string;
  /** `name=value&…` to append to every request path; empty when there is none. */
  readonly #query: string;
  readonly #misconfiguration: MisconfigurationReport;

  constructor(options: HttpUpstreamOptions) {
    this.#options = options;
    const url = new URL(options.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '') + (options.pathPrefix ?? '');
    this.#query = new URLSearchParams(options.query ?? {}).toString();
    this.#origin = url.origin;
    this.#misconfiguration = new MisconfigurationReport(options.log, options.name, options.baseUrl);
    const connection = {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: IDLE_CONNECTION_MS,
    };
    this.#pool = outboundProxyConfigured() ? proxiedDispatcher(connection) : new Pool(url.origin, connection);
  }

  async request(method: 'GET' | 'POST', path: string, body: string | null, headers: Record<string, string>, signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#pool.request({ origin: this.#origin, method, path: this.#pathOf(path), headers: withTrace(headers, trace), body, signal });
    } catch (error) {
      throw this.#transportFailure(error, signal);
    }
    const coding = response.headers['content-encoding'];
    // An error body a proxy compressed all the same is not read as text (its bytes would be the message): the status says it.
    if (response.statusCode >= 300) throw this.#statusError(response.statusCode, coding !== undefined && coding !== IDENTITY ? await response.body.dump().then(() => '', () => '') : await response.body.text().catch(() => ''), response.headers);
    if (coding !== undefined && coding !== IDENTITY) {
      // Read past (undici reads up to 128 KiB of it, then cuts the connection) rather than destroyed, which would leave an error nobody hears.
      void response.body.dump().catch(() => {});
      throw this.#encodedAnswer(coding);
    }
    return response;
  }

  /**
   * A request whose answer is one JSON document, read whole without a body
   * stream (whole-body-handler.ts); the same errors as `request` and then
   * reading the body as JSON: a body that breaks off or is not JSON is `invalid(cause)`.
   */
  async requestJson(method: 'GET' | 'POST', path: string, body: string | null, headers: Record<string, string>, signal: AbortSignal, invalid: (cause: unknown) => GatewayError, trace?: TraceContext, endpoint: EndpointKind = 'required'): Promise<unknown> {
    let answer: WholeAnswer;
    try {
      answer = await new Promise<WholeAnswer>((resolve, reject) => {
        this.#pool.dispatch({ origin: this.#origin, method, path: this.#pathOf(path), headers: withTrace(headers, trace), body }, new WholeBodyHandler(signal, resolve, reject));
      });
    } catch (failure) {
      if (!(failure instanceof WholeAnswerFailure)) throw this.#transportFailure(failure, signal);
      const cause = failure.cause as Error;
      const { started } = failure;
      if (started === null) throw this.#transportFailure(cause, signal);
      // An error answer whose body broke off is still that error, told without its body.
      if (started.statusCode >= 300) throw this.#statusError(started.statusCode, '', started.headers, endpoint);
      // A body that fell silent ran out the idle bound: a timeout, as silence inside a stream is; one that would not end, its size bound.
      const code = transportCode(cause);
      if (code === 'UND_ERR_BODY_TIMEOUT' || code === ANSWER_TOO_LARGE) throw this.#transportFailure(cause, signal);
      throw invalid(cause);
    }
    const coding = answer.headers['content-encoding'];
    if (answer.statusCode >= 300) throw this.#statusError(answer.statusCode, coding !== undefined && coding !== IDENTITY ? '' : answer.text, answer.headers, endpoint);
    if (coding !== undefined && coding !== IDENTITY) throw this.#encodedAnswer(coding);
    try {
      return JSON.parse(answer.text);
    } catch (error) {
      throw invalid(error);
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** A request that got no answer: the caller's own abort as it came, anything else as the transport's error. */
  #transportFailure(error: unknown, signal: AbortSignal): unknown {
    return signal.aborted ? error : errorFromTransport(this.#options.name, error);
  }

  /** An error answer as the wire's own error, logged when it says the gateway's configuration is wrong. */
  #statusError(statusCode: number, text: string, headers: Dispatcher.ResponseData['headers'], endpoint: EndpointKind = 'required'): GatewayError {
    const { name } = this.#options;
    const location = headers.location;
    const error = statusCode < 400 ? redirectRefused(name, statusCode, typeof location === 'string' ? location : null) : this.#options.errorFromStatus(name, statusCode, text, retryHeadersOf((header) => headers[header]));
    // A server without an endpoint the gateway only tries (a count of input tokens) is no wrong base URL.
    const missing = endpoint === 'optional' ? missingEndpoint(name, statusCode, error) : null;
    if (missing) return missing;
    this.#misconfiguration.heard(error);
    return error;
  }

  #encodedAnswer(coding: string | string[]): GatewayError {
    return invalidUpstreamBody(this.#options.name, new Error(`the answer came ${String(coding)}-encoded`), `The upstream '${this.#options.name}' sent its answer ${String(coding)}-encoded, though the gateway asks for no encoding (accept-encoding: identity) and reads none: a proxy in between may be compressing it.`);
  }

  #pathOf(path: string): string {
    if (!this.#query) return this.#basePath + path;
    return `${this.#basePath}${path}${path.includes('?') ? '&' : '?'}${this.#query}`;
  }
}

function withTrace(headers: Record<string, string>, trace: TraceContext | undefined): Record<string, string> {
  return trace ? { ...headers, ...traceHeaders(trace) } : headers;
}

/**
 * What every request asks for by way of content coding: none. Without it any
 * coding is acceptable to the client (RFC 9110), and a compressing server or
 * proxy sent bytes the gateway read as text. An answer encoded all the same
 * is refused, saying so.
 */
export const IDENTITY = 'identity';

/** How an OpenAI-wire upstream takes its key and what every request carries in its query (config `auth`, `apiVersion`, `queryParams`). */
export interface OpenAIEndpointOptions {
  apiKey: string | null;
  /** `bearer`: `Authorization: Bearer <key>` (OpenAI and most compatible servers); `api-key`: an `api-key` header (Azure OpenAI). */
  auth?: 'bearer' | 'api-key';
  /** Sent as the `api-version` query parameter (Azure OpenAI's dated APIs; its v1 API needs none). */
  apiVersion?: string | null;
  queryParams?: Readonly<Record<string, string>>;
}

/** JSON request headers with the key as the upstream takes it, by the `accept` the caller wants, built once per provider. */
export function openAIJsonHeaders(options: OpenAIEndpointOptions): Record<'json' | 'sse', Record<string, string>> {
  const common: Record<string, string> = { 'content-type': 'application/json', 'accept-encoding': IDENTITY };
  if (options.apiKey) {
    if (options.auth === 'api-key') common['api-key'] = options.apiKey;
    else common.authorization = `Bearer ${options.apiKey}`;
  }
  return { json: { ...common, accept: 'application/json' }, sse: { ...common, accept: 'text/event-stream' } };
}

/** The query every request to an OpenAI-wire upstream carries: `queryParams`, with `apiVersion` as `api-version`. */
export function openAIQuery(options: OpenAIEndpointOptions): Record<string, string> {
  return { ...options.queryParams, ...(options.apiVersion && { 'api-version': options.apiVersion }) };
}
