import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { traceHeaders, type TraceContext } from '../../util/trace-context.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrames } from '../sse-frames.ts';
import { errorFromTransport, reportMisconfiguration, type ProviderLogger } from '../upstream-errors.ts';
import { convertToGeminiRequest } from './convert-to-gemini-request.ts';
import { errorFromGeminiStatus, unreadableGeminiBody } from './gemini-errors.ts';
import { readGeminiResponse, startGeminiStream } from './gemini-stream.ts';

export interface GeminiProviderOptions {
  name: string;
  /** The API's origin (and any prefix before `/v1beta`), e.g. `https://generativelanguage.googleapis.com`. */
  baseUrl: string;
  /** Sent as `x-goog-api-key`; null for endpoints that authenticate otherwise (a proxy in front of Vertex AI). */
  apiKey: string | null;
  /** The API version segment of the path. */
  apiVersion: string;
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
 * Gemini through its native API: `streamGenerateContent?alt=sse` for
 * streaming clients, `generateContent` otherwise, both read by one
 * translator. HTTP goes through an undici pool, as for Chat Completions.
 */
export class GeminiProvider implements Provider {
  readonly name: string;
  readonly #options: GeminiProviderOptions;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;

  constructor(options: GeminiProviderOptions) {
    this.name = options.name;
    this.#options = options;
    const url = new URL(options.baseUrl);
    this.#basePath = `${url.pathname.replace(/\/+$/, '')}/${options.apiVersion}`;
    this.#pool = new Pool(url.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 30_000,
    });
    this.#headers = { 'content-type': 'application/json', ...(options.apiKey && { 'x-goog-api-key': options.apiKey }) };
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = JSON.stringify(convertToGeminiRequest(request));
    const model = encodeURIComponent(request.model.replace(/^models\//, ''));
    if (request.stream) {
      const response = await this.#send('POST', `/models/${model}:streamGenerateContent?alt=sse`, body, signal, request.trace);
      return startGeminiStream(readSseFrames(response.body), this.name, signal);
    }
    const response = await this.#send('POST', `/models/${model}:generateContent`, body, signal, request.trace);
    return this.#readWhole(response.body);
  }

  /** Gemini's `countTokens`, sent the request `startTurn` would send (its generation settings do not count). */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const { generationConfig: _generation, ...counted } = convertToGeminiRequest(request);
    const model = request.model.replace(/^models\//, '');
    const body = JSON.stringify({ generateContentRequest: { model: `models/${model}`, ...counted } });
    const response = await this.#send('POST', `/models/${encodeURIComponent(model)}:countTokens`, body, signal, request.trace);
    let parsed: { totalTokens?: unknown };
    try {
      parsed = (await response.body.json()) as { totalTokens?: unknown };
    } catch {
      throw unreadableGeminiBody(this.name, 'the countTokens body is not JSON');
    }
    if (typeof parsed?.totalTokens !== 'number') throw unreadableGeminiBody(this.name, 'countTokens sent no totalTokens');
    return parsed.totalTokens;
  }

  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    try {
      const response = await this.#send('GET', '/models?pageSize=1000', null, signal);
      const body = (await response.body.json()) as { models?: { name?: unknown }[] };
      return (body.models ?? []).flatMap((model) => (typeof model.name === 'string' ? [{ id: model.name.replace(/^models\//, ''), owned_by: this.name }] : []));
    } catch {
      return [];
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #send(method: 'GET' | 'POST', path: string, body: string | null, signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    const headers = trace ? { ...this.#headers, ...traceHeaders(trace) } : this.#headers;
    try {
      response = await this.#pool.request({ method, path: this.#basePath + path, headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw errorFromTransport(this.name, error);
    }
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      const retryAfter = response.headers['retry-after'];
      const error = errorFromGeminiStatus(this.name, response.statusCode, text, typeof retryAfter === 'string' ? retryAfter : null);
      reportMisconfiguration(this.#options.log, error, this.name, this.#options.baseUrl);
      throw error;
    }
    return response;
  }

  async #readWhole(body: Dispatcher.ResponseData['body']): Promise<TurnEvent[]> {
    let parsed: unknown;
    try {
      parsed = await body.json();
    } catch {
      throw unreadableGeminiBody(this.name, 'the body is not JSON');
    }
    return readGeminiResponse(parsed, this.name);
  }
}
