import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { GatewayError } from '../errors/gateway-error.ts';
import { traceHeaders, type TraceContext } from '../util/trace-context.ts';
import { errorFromTransport, reportMisconfiguration, type ProviderLogger } from './upstream-errors.ts';

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

/** Turns an upstream's HTTP error answer into the gateway's error; each wire has its own error body. */
export type StatusErrorMapper = (provider: string, status: number, bodyText: string, retryAfter: string | null) => GatewayError;

export interface HttpUpstreamOptions extends UpstreamConnectionOptions {
  /** Appended to the base URL's path before every request path (Gemini's API version). */
  pathPrefix?: string;
  errorFromStatus: StatusErrorMapper;
}

/**
 * One upstream reached through an undici pool: measured, the pool carries
 * several times the requests per second of the global `fetch`. Requests come
 * back only when the upstream answered below 400; transport failures and error
 * statuses are thrown as `GatewayError`s, unless the caller aborted.
 */
export class HttpUpstream {
  readonly #options: HttpUpstreamOptions;
  readonly #pool: Pool;
  readonly #basePath: string;

  constructor(options: HttpUpstreamOptions) {
    this.#options = options;
    const url = new URL(options.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '') + (options.pathPrefix ?? '');
    this.#pool = new Pool(url.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 30_000,
    });
  }

  async request(method: 'GET' | 'POST', path: string, body: string | null, headers: Record<string, string>, signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    const { name, log, baseUrl } = this.#options;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#pool.request({ method, path: this.#basePath + path, headers: trace ? { ...headers, ...traceHeaders(trace) } : headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw errorFromTransport(name, error);
    }
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      const retryAfter = response.headers['retry-after'];
      const error = this.#options.errorFromStatus(name, response.statusCode, text, typeof retryAfter === 'string' ? retryAfter : null);
      reportMisconfiguration(log, error, name, baseUrl);
      throw error;
    }
    return response;
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}

/** JSON request headers with an optional bearer key, by the `accept` the caller wants, built once per provider. */
export function bearerJsonHeaders(apiKey: string | null): Record<'json' | 'sse', Record<string, string>> {
  const common: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) common.authorization = `Bearer ${apiKey}`;
  return { json: { ...common, accept: 'application/json' }, sse: { ...common, accept: 'text/event-stream' } };
}

/** An upstream body parsed as JSON; a body that is not JSON throws the wire's own invalid-body error. */
export async function readJsonBody(body: Dispatcher.ResponseData['body'], invalid: (cause: unknown) => GatewayError): Promise<unknown> {
  try {
    return await body.json();
  } catch (error) {
    throw invalid(error);
  }
}
