import type { Dispatcher } from 'undici';
import type { UpstreamHostedToolType } from '../../protocol/hosted-tools.ts';
import type { TraceContext } from '../../util/trace-context.ts';
import { HttpUpstream, openAIJsonHeaders, openAIQuery, type OpenAIEndpointOptions, type UpstreamConnectionOptions } from '../http-upstream.ts';
import { readOpenAIModelList } from '../openai-model-list.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../provider.ts';
import { readSseFrameBatches } from '../sse-frames.ts';
import { convertToResponsesRequest, toInputTokensRequest, type ResponsesRequestOptions } from './convert-to-responses-request.ts';
import { readResponsesBody } from './read-responses-body.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { errorFromResponsesStatus } from './responses-errors.ts';
import { startResponsesStream } from './responses-stream.ts';
import { refusedEncryptedReasoning, withoutEncryptedReasoning } from './unverified-reasoning.ts';

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
  readonly #invalidBody = (cause: unknown) => invalidUpstreamBody(this.name, cause);
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
    try {
      return await this.#startTurn(request, signal);
    } catch (error) {
      const retried = refusedEncryptedReasoning(error) ? withoutEncryptedReasoning(request) : null;
      if (!retried) throw error;
      this.#options.log?.warn({ provider: this.name, code: 'invalid_encrypted_content' }, 'the upstream could not verify the encrypted reasoning it was sent back (minted under another key or organisation): the call is made again without it');
      return this.#startTurn(retried, signal);
    }
  }

  async #startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = JSON.stringify(convertToResponsesRequest(request, this.#options));
    if (!request.stream) return readResponsesBody(await this.#upstream.requestJson('POST', '/responses', body, this.#headers.json, signal, this.#invalidBody, request.trace), this.name, this.#leftOut);
    const response = await this.#send('POST', '/responses', body, 'sse', signal, request.trace);
    return startResponsesStream(readSseFrameBatches(response.body), this.name, signal, this.#leftOut);
  }

  /** Output a client cannot be given (a kind newer than the gateway) is left out of an answer: said to the operator, not dropped silently. */
  readonly #leftOut = (types: string[]) => this.#options.log?.warn({ provider: this.name, item_types: types }, 'upstream output items of a kind this gateway cannot pass on were left out of the answer');

  /** OpenAI's own count (`POST /responses/input_tokens`), sent the parts of the turn's body that endpoint takes. */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const counting = JSON.stringify(toInputTokensRequest(convertToResponsesRequest(request, this.#options)));
    const body = await this.#upstream.requestJson('POST', '/responses/input_tokens', counting, this.#headers.json, signal, this.#invalidBody, request.trace, 'optional');
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

}
