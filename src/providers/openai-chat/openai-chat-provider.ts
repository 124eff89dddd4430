import type { Dispatcher } from 'undici';
import type { TraceContext } from '../../util/trace-context.ts';
import { HttpUpstream, openAIJsonHeaders, openAIQuery, readJsonBody, type OpenAIEndpointOptions, type UpstreamConnectionOptions } from '../http-upstream.ts';
import { readOpenAIModelList } from '../openai-model-list.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrameBatches } from '../sse-frames.ts';
import { errorFromUpstreamStatus } from '../upstream-errors.ts';
import { startChatStream } from './chat-stream.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { readChatCompletion } from './read-chat-completion.ts';
import { convertToChatRequest, type ChatRequestOptions } from './convert-to-chat-request.ts';

export interface OpenAIChatProviderOptions extends ChatRequestOptions, UpstreamConnectionOptions, OpenAIEndpointOptions {}

/**
 * A provider for any OpenAI-compatible Chat Completions server (OpenAI, vLLM,
 * Ollama, llama.cpp, …), reached through an `HttpUpstream`. Non-streaming client requests are made non-streaming upstream too; both
 * paths feed the same translator.
 */
export class OpenAIChatProvider implements Provider {
  readonly name: string;
  readonly #options: OpenAIChatProviderOptions;
  readonly #upstream: HttpUpstream;
  /** Request headers by `accept` value, built once. */
  readonly #headers: Record<'json' | 'sse', Record<string, string>>;

  constructor(options: OpenAIChatProviderOptions) {
    this.name = options.name;
    this.#options = options;
    this.#upstream = new HttpUpstream({ ...options, query: openAIQuery(options), errorFromStatus: errorFromUpstreamStatus });
    this.#headers = openAIJsonHeaders(options);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = convertToChatRequest(request, this.#options);
    const response = await this.#send('POST', '/chat/completions', JSON.stringify(body), request.stream ? 'sse' : 'json', signal, request.trace);
    return request.stream ? startChatStream(readSseFrameBatches(response.body), this.name, signal) : this.#readCompletion(response.body);
  }

  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    const response = await this.#send('GET', '/models', null, 'json', signal);
    return readOpenAIModelList(await response.body.json(), this.name);
  }

  async close(): Promise<void> {
    await this.#upstream.close();
  }

  #send(method: 'GET' | 'POST', path: string, body: string | null, accept: 'json' | 'sse', signal: AbortSignal, trace?: TraceContext): Promise<Dispatcher.ResponseData> {
    return this.#upstream.request(method, path, body, this.#headers[accept], signal, trace);
  }

  async #readCompletion(body: Dispatcher.ResponseData['body']): Promise<TurnEvent[]> {
    return readChatCompletion(await readJsonBody(body, (cause) => invalidUpstreamBody(this.name, cause)), this.name);
  }
}
