import type { Dispatcher } from 'undici';
import type { TraceContext } from '../../util/trace-context.ts';
import { HttpUpstream, openAIJsonHeaders, openAIQuery, type OpenAIEndpointOptions, type UpstreamConnectionOptions } from '../http-upstream.ts';
import { readOpenAIModelList } from '../openai-model-list.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrameBatches } from '../sse-frames.ts';
import { errorFromUpstreamStatus } from '../upstream-errors.ts';
import { startChatStream } from './chat-stream.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { readChatCompletion } from './read-chat-completion.ts';
import { chatParamAsResponses } from './chat-param.ts';
import { ReasoningFieldChoice, type ReasoningField, type ReasoningHeard } from './reasoning-field.ts';
import { convertToChatRequest, type ChatRequestOptions } from './convert-to-chat-request.ts';
import type { ChatRequest } from './chat-wire.ts';

export interface OpenAIChatProviderOptions extends ChatRequestOptions, UpstreamConnectionOptions, OpenAIEndpointOptions {
  /** The field earlier turns' reasoning goes back in (reasoning-field.ts); `auto` by default. */
  reasoningField?: 'auto' | ReasoningField;
}

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
  readonly #invalidBody = (cause: unknown) => invalidUpstreamBody(this.name, cause);
  readonly #reasoningField: ReasoningFieldChoice;

  constructor(options: OpenAIChatProviderOptions) {
    this.name = options.name;
    this.#options = options;
    this.#upstream = new HttpUpstream({ ...options, query: openAIQuery(options), errorFromStatus: (name, status, text, retry) => errorFromUpstreamStatus(name, status, text, retry, chatParamAsResponses) });
    this.#headers = openAIJsonHeaders(options);
    this.#reasoningField = new ReasoningFieldChoice(options.reasoningField ?? 'auto');
  }

  /** Not an async function: the plain call's promise is the turn's own (one promise fewer per call); a refusal about the reasoning field goes round once more. */
  startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const fields = this.#reasoningField;
    const field = fields.field(request.model);
    const details = fields.takesDetails(request.model);
    let chat: ChatRequest;
    try {
      chat = convertToChatRequest(request, this.#options, { field, details });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#call(request, chat, signal).catch((error: unknown) => this.#againForReasoning(error, request, chat, field, details, signal));
  }

  /** The server asked for the field earlier reasoning goes back in (DeepSeek), or refused the one sent (Groq): once more, with it; else the error stands. */
  async #againForReasoning(error: unknown, request: TurnRequest, chat: ChatRequest, field: ReasoningField | null, details: boolean, signal: AbortSignal): Promise<TurnStream> {
    const fields = this.#reasoningField;
    const next = fields.afterRefusal(error, request.model, field !== null && sendsReasoningIn(chat, field) ? field : null);
    if (next === undefined) throw error;
    const again = convertToChatRequest(request, this.#options, { field: next, details });
    if (!sendsReasoningIn(again, next)) throw error;
    try {
      return await this.#call(request, again, signal);
    } catch (failure) {
      // Refused that way too: the server takes neither, and is sent none.
      fields.heard(request.model, null);
      throw failure;
    }
  }

  async #call(request: TurnRequest, chat: ChatRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = JSON.stringify(chat);
    const heard = (what: ReasoningHeard): void => this.#reasoningField.heardFrom(request.model, what);
    if (!request.stream) return readChatCompletion(await this.#upstream.requestJson('POST', '/chat/completions', body, this.#headers.json, signal, this.#invalidBody, request.trace), this.name, heard);
    const response = await this.#send('POST', '/chat/completions', body, 'sse', signal, request.trace);
    return startChatStream(readSseFrameBatches(response.body), this.name, signal, heard);
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

}

/** Whether the request sends earlier reasoning in `field` (so a refusal naming it could be of it). */
function sendsReasoningIn(chat: ChatRequest, field: ReasoningField): boolean {
  return chat.messages.some((message) => message.role === 'assistant' && message[field] !== undefined);
}
