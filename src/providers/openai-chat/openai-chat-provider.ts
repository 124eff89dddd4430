import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrames, type SseFrame } from '../sse-frames.ts';
import { errorFromTransport, errorFromUpstreamFrame, errorFromUpstreamStatus } from '../upstream-errors.ts';
import { ChatChunkTranslator, readInBandError } from './chat-chunk-translator.ts';
import type { ChatChunk, ChatCompletion } from './chat-wire.ts';
import { convertToChatRequest, type ChatRequestOptions } from './convert-to-chat-request.ts';

export interface OpenAIChatProviderOptions extends ChatRequestOptions {
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
}

/**
 * A provider for any OpenAI-compatible Chat Completions server (OpenAI, vLLM,
 * Ollama, llama.cpp, …). It talks HTTP through an undici pool: measured, the
 * pool carries several times the requests per second of the global `fetch`.
 * Non-streaming client requests are made non-streaming upstream too; both
 * paths feed the same translator.
 */
export class OpenAIChatProvider implements Provider {
  readonly name: string;
  readonly #options: OpenAIChatProviderOptions;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;

  constructor(options: OpenAIChatProviderOptions) {
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
    this.#headers = { 'content-type': 'application/json' };
    if (options.apiKey) this.#headers.authorization = `Bearer ${options.apiKey}`;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = convertToChatRequest(request, this.#options);
    const response = await this.#send('POST', '/chat/completions', JSON.stringify(body), request.stream ? 'text/event-stream' : 'application/json', signal);
    return request.stream ? this.#startStream(response.body, signal) : this.#readCompletion(response.body);
  }

  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    const response = await this.#send('GET', '/models', null, 'application/json', signal);
    const body = (await response.body.json()) as { data?: { id?: unknown; owned_by?: unknown }[] };
    return (body.data ?? [])
      .filter((model): model is { id: string; owned_by?: unknown } => typeof model.id === 'string')
      .map((model) => ({ id: model.id, owned_by: typeof model.owned_by === 'string' ? model.owned_by : this.name }));
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #send(method: 'GET' | 'POST', path: string, body: string | null, accept: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#pool.request({ method, path: this.#basePath + path, headers: { ...this.#headers, accept }, body, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw errorFromTransport(this.name, error);
    }
    if (response.statusCode >= 400) {
      const text = await response.body.text().catch(() => '');
      const retryAfter = response.headers['retry-after'];
      throw errorFromUpstreamStatus(this.name, response.statusCode, text, typeof retryAfter === 'string' ? retryAfter : null);
    }
    return response;
  }

  async #readCompletion(body: Dispatcher.ResponseData['body']): Promise<TurnEvent[]> {
    let completion: ChatCompletion & ChatChunk;
    try {
      completion = (await body.json()) as ChatCompletion & ChatChunk;
    } catch (error) {
      throw invalidUpstreamBody(this.name, error);
    }
    const inBandError = readInBandError(completion);
    if (inBandError) throw errorFromUpstreamFrame(this.name, inBandError.code, inBandError.message);
    const choice = completion.choices?.[0];
    if (!choice) throw invalidUpstreamBody(this.name, 'no choices');
    const translator = new ChatChunkTranslator();
    const events: TurnEvent[] = [];
    if (choice.message) translator.acceptDelta(choice.message, events);
    translator.setFinishReason(choice.finish_reason ?? null);
    if (completion.usage) translator.setUsage(completion.usage);
    translator.finish(events);
    return events;
  }

  /** Reads frames up to the first one with content, so an immediate error still becomes an HTTP status. */
  async #startStream(body: Dispatcher.ResponseData['body'], signal: AbortSignal): Promise<TurnStream> {
    const frames = readSseFrames(body);
    const translator = new ChatChunkTranslator();
    const first: TurnEvent[] = [];
    let firstResult: IteratorResult<SseFrame>;
    try {
      firstResult = await frames.next();
    } catch (error) {
      if (signal.aborted) throw error;
      throw errorFromTransport(this.name, error);
    }
    if (!firstResult.done && firstResult.value.data !== '[DONE]') {
      const chunk = parseChunk(firstResult.value.data);
      if (!chunk) throw invalidUpstreamBody(this.name, 'unparseable first chunk');
      translator.accept(chunk, first);
      const error = first.find((event) => event.type === 'error');
      if (error) {
        body.destroy();
        throw errorFromUpstreamFrame(this.name, error.code, error.message);
      }
    }
    const ended = firstResult.done || firstResult.value.data === '[DONE]';
    return this.#continueStream(frames, translator, first, ended, signal);
  }

  async *#continueStream(frames: AsyncGenerator<SseFrame>, translator: ChatChunkTranslator, first: TurnEvent[], ended: boolean, signal: AbortSignal): AsyncGenerator<TurnEvent> {
    yield* first;
    const batch: TurnEvent[] = [];
    try {
      if (!ended) {
        for await (const frame of frames) {
          if (frame.data === '[DONE]') break;
          const chunk = parseChunk(frame.data);
          if (!chunk) {
            yield { type: 'error', code: 'upstream_invalid_response', message: `The upstream '${this.name}' sent a frame that is not JSON.` };
            return;
          }
          translator.accept(chunk, batch);
          for (const event of batch) {
            yield event;
            if (event.type === 'error') return;
          }
          batch.length = 0;
        }
      }
    } catch (error) {
      if (signal.aborted) throw error;
      const mapped = errorFromTransport(this.name, error);
      yield { type: 'error', code: mapped.code ?? 'upstream_error', message: mapped.message };
      return;
    } finally {
      await frames.return(undefined);
    }
    if (!translator.finished) {
      yield { type: 'error', code: 'upstream_stream_truncated', message: `The upstream '${this.name}' closed the stream before the model finished.` };
      return;
    }
    translator.finish(batch);
    yield* batch;
  }
}

function parseChunk(data: string): ChatChunk | null {
  try {
    const value: unknown = JSON.parse(data);
    return value !== null && typeof value === 'object' ? (value as ChatChunk) : null;
  } catch {
    return null;
  }
}

function invalidUpstreamBody(provider: string, cause: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    message: `The upstream '${provider}' sent a response the gateway could not read.`,
    cause,
  });
}
