import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { traceHeaders, type TraceContext } from '../../util/trace-context.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrames } from '../sse-frames.ts';
import { errorFromTransport, errorFromUpstreamStatus, reportMisconfiguration, type ProviderLogger } from '../upstream-errors.ts';
import { convertToResponsesRequest, toInputTokensRequest, type ResponsesRequestOptions } from './convert-to-responses-request.ts';
import { readResponsesBody } from './read-responses-body.ts';
import { invalidResponsesBody } from './responses-errors.ts';
import { startResponsesStream } from './responses-stream.ts';

export interface OpenAIResponsesProviderOptions extends ResponsesRequestOptions {
  name: string;
  /** Base URL including the API prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string | null;
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

/**
 * A provider for OpenAI's Responses API (or Azure OpenAI, or any compatible
 * server). The gateway's loop stays in charge: each turn is one stateless
 * `POST /responses` with the whole conversation, and the gateway's store keeps
 * `previous_response_id` chains. Streaming client requests stream upstream;
 * both paths feed the same translator.
 */
export class OpenAIResponsesProvider implements Provider {
  readonly name: string;
  readonly #options: OpenAIResponsesProviderOptions;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Record<'json' | 'sse', Record<string, string>>;

  constructor(options: OpenAIResponsesProviderOptions) {
    this.name = options.name;
    this.#options = options;
    const url = new URL(options.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(url.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 30_000,
    });
    const common: Record<string, string> = { 'content-type': 'application/json' };
    if (options.apiKey) common.authorization = `Bearer ${options.apiKey}`;
    this.#headers = { json: { ...common, accept: 'application/json' }, sse: { ...common, accept: 'text/event-stream' } };
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = convertToResponsesRequest(request, this.#options);
    const response = await this.#send('POST', '/responses', JSON.stringify(body), request.stream ? 'sse' : 'json', signal, request.trace);
    return request.stream ? startResponsesStream(readSseFrames(response.body), this.name, signal) : this.#readBody(response.body);
  }

  /** OpenAI's own count (`POST /responses/input_tokens`), sent the parts of the turn's body that endpoint takes. */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const response = await this.#send('POST', '/responses/input_tokens', JSON.stringify(toInputTokensRequest(convertToResponsesRequest(request, this.#options))), 'json', signal, request.trace);
    let body: unknown;
    try {
      body = await response.body.json();
    } catch (error) {
      throw invalidResponsesBody(this.name, error);
    }
    const counted = (body as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof counted !== 'number' || !Number.isFinite(counted)) throw invalidResponsesBody(this.name, 'the count has no input_tokens');
    return counted;
  }

  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    const response = await this.#send('GET', '/models', null, 'json', signal);
    const body = (await response.body.json()) as { data?: { id?: unknown; owned_by?: unknown }[] };
    return (body.data ?? [])
      .filter((model): model is { id: string; owned_by?: unknown } => typeof model.id === 'string')
      .map((model) => ({ id: model.id, owned_by: typeof model.owned_by === 'string' ? model.owned_by : this.name }));
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #send(method: 'GET' | 'POST', path: string, body: string | null, accept: 'json' | 'sse', signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    const headers = trace ? { ...this.#headers[accept], ...traceHeaders(trace) } : this.#headers[accept];
    try {
      response = await this.#pool.request({ method, path: this.#basePath + path, headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw errorFromTransport(this.name, error);
    }
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      const retryAfter = response.headers['retry-after'];
      const error = errorFromUpstreamStatus(this.name, response.statusCode, text, typeof retryAfter === 'string' ? retryAfter : null);
      reportMisconfiguration(this.#options.log, error, this.name, this.#options.baseUrl);
      throw error;
    }
    return response;
  }

  async #readBody(body: Dispatcher.ResponseData['body']): Promise<TurnEvent[]> {
    let parsed: unknown;
    try {
      parsed = await body.json();
    } catch (error) {
      throw invalidResponsesBody(this.name, error);
    }
    return readResponsesBody(parsed, this.name);
  }
}
