import type { Dispatcher } from 'undici';
import type { TraceContext } from '../../util/trace-context.ts';
import { HttpUpstream, IDENTITY, type UpstreamConnectionOptions } from '../http-upstream.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrameBatches } from '../sse-frames.ts';
import { convertToGeminiRequest } from './convert-to-gemini-request.ts';
import { errorFromGeminiStatus, unreadableGeminiBody } from './gemini-errors.ts';
import { readGeminiResponse, startGeminiStream } from './gemini-stream.ts';

export interface GeminiProviderOptions extends UpstreamConnectionOptions {
  /** The API's origin (and any prefix before `/v1beta`), e.g. `https://generativelanguage.googleapis.com`. */
  baseUrl: string;
  /** Sent as `x-goog-api-key`; null for endpoints that authenticate otherwise (a proxy in front of Vertex AI). */
  apiKey: string | null;
  /** The API version segment of the path. */
  apiVersion: string;
}

/**
 * Gemini through its native API: `streamGenerateContent?alt=sse` for
 * streaming clients, `generateContent` otherwise, both read by one
 * translator. HTTP goes through an `HttpUpstream`, as for Chat Completions.
 */
export class GeminiProvider implements Provider {
  readonly name: string;
  readonly #upstream: HttpUpstream;
  readonly #headers: Record<string, string>;

  constructor(options: GeminiProviderOptions) {
    this.name = options.name;
    this.#upstream = new HttpUpstream({ ...options, pathPrefix: `/${options.apiVersion}`, errorFromStatus: errorFromGeminiStatus });
    this.#headers = { 'content-type': 'application/json', 'accept-encoding': IDENTITY, ...(options.apiKey && { 'x-goog-api-key': options.apiKey }) };
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = JSON.stringify(convertToGeminiRequest(request));
    const model = encodeURIComponent(request.model.replace(/^models\//, ''));
    if (request.stream) {
      const response = await this.#send('POST', `/models/${model}:streamGenerateContent?alt=sse`, body, signal, request.trace);
      return startGeminiStream(readSseFrameBatches(response.body), this.name, signal);
    }
    const answer = await this.#upstream.requestJson('POST', `/models/${model}:generateContent`, body, this.#headers, signal, () => unreadableGeminiBody(this.name, 'the body is not JSON'), request.trace);
    return readGeminiResponse(answer, this.name);
  }

  /** Gemini's `countTokens`, sent the request `startTurn` would send (its generation settings do not count). */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const { generationConfig: _generation, ...counted } = convertToGeminiRequest(request);
    const model = request.model.replace(/^models\//, '');
    const body = JSON.stringify({ generateContentRequest: { model: `models/${model}`, ...counted } });
    const invalid = () => unreadableGeminiBody(this.name, 'the countTokens body is not JSON');
    const parsed = (await this.#upstream.requestJson('POST', `/models/${encodeURIComponent(model)}:countTokens`, body, this.#headers, signal, invalid, request.trace)) as { totalTokens?: unknown };
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
    await this.#upstream.close();
  }

  #send(method: 'GET' | 'POST', path: string, body: string | null, signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    return this.#upstream.request(method, path, body, this.#headers, signal, trace);
  }

}
