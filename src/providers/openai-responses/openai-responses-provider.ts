import type { Dispatcher } from 'undici';
import type { UpstreamHostedToolType } from '../../protocol/hosted-tools.ts';
import type { TraceContext } from '../../util/trace-context.ts';
import { HttpUpstream, openAIJsonHeaders, openAIQuery, readJsonBody, type OpenAIEndpointOptions, type UpstreamConnectionOptions } from '../http-upstream.ts';
import { readOpenAIModelList } from '../openai-model-list.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrameBatches } from '../sse-frames.ts';
import { convertToResponsesRequest, toInputTokensRequest, type ResponsesRequestOptions } from './convert-to-responses-request.ts';
import { readResponsesBody } from './read-responses-body.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { errorFromResponsesStatus } from './responses-errors.ts';
import { startResponsesStream } from './responses-stream.ts';

export interface OpenAIResponsesProviderOptions extends ResponsesRequestOptions, UpstreamConnectionOptions, OpenAIEndpointOptions {
  /** The hosted tools the upstream runs itself (config `hostedTools`); none when absent. */
  hostedTools?: readonly UpstreamHostedToolType[];
}

/**
 * A provider for OpenAI's Responses API (or Azure OpenAI, or any compatible
 * server). The gateway's loop stays in charge: each turn is one stateless
 * `POST /responses` with the whole conversation, and the gateway's store keeps
 * `previous_response_id` chains. Streaming client requests stream upstream;
 * both paths feed the same translator. Hosted tools the upstream runs
 * (`hostedTools`) are offered to it, and their calls come back as opaque
 * hosted items.
 */
export class OpenAIResponsesProvider implements Provider {
  readonly name: string;
  readonly #options: OpenAIResponsesProviderOptions;
  readonly #upstream: HttpUpstream;
  readonly #headers: Record<'json' | 'sse', Record<string, string>>;
  readonly #hostedTools: ReadonlySet<string>;

  constructor(options: OpenAIResponsesProviderOptions) {
    this.name = options.name;
    this.#options = options;
    this.#upstream = new HttpUpstream({ ...options, query: openAIQuery(options), errorFromStatus: errorFromResponsesStatus });
    this.#headers = openAIJsonHeaders(options);
    this.#hostedTools = new Set(options.hostedTools ?? []);
  }

  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.#hostedTools.has(type);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = convertToResponsesRequest(request, this.#options);
    const response = await this.#send('POST', '/responses', JSON.stringify(body), request.stream ? 'sse' : 'json', signal, request.trace);
    return request.stream ? startResponsesStream(readSseFrameBatches(response.body), this.name, signal) : this.#readBody(response.body);
  }

  /** OpenAI's own count (`POST /responses/input_tokens`), sent the parts of the turn's body that endpoint takes. */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const response = await this.#send('POST', '/responses/input_tokens', JSON.stringify(toInputTokensRequest(convertToResponsesRequest(request, this.#options))), 'json', signal, request.trace);
    const body = await readJsonBody(response.body, (cause) => invalidUpstreamBody(this.name, cause));
    const counted = (body as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof counted !== 'number' || !Number.isFinite(counted)) throw invalidUpstreamBody(this.name, 'the count has no input_tokens');
    return counted;
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

  async #readBody(body: Dispatcher.ResponseData['body']): Promise<TurnEvent[]> {
    return readResponsesBody(await readJsonBody(body, (cause) => invalidUpstreamBody(this.name, cause)), this.name);
  }
}
