import { invalidRequest } from '../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../protocol/create-response-request.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';
import type { ModelRouter } from '../providers/model-router.ts';
import type { TurnRequest } from '../providers/provider.ts';
import type { ResponseStore, StoredInputItem } from '../store/response-store.ts';
import { newId } from '../util/ids.ts';
import { buildConversation } from './conversation.ts';
import { initialResponse } from './initial-response.ts';
import { streamResponseEvents } from './response-events.ts';

export interface ResponseEngineOptions {
  router: ModelRouter;
  store: ResponseStore;
  /** Serves requests that name no model; without one such requests are a 400. */
  defaultModel: string | null;
}

/** A response whose first model call has been accepted by the upstream. */
export interface ResponseRun {
  readonly id: string;
  /** The one ordered event stream, for SSE as it comes or folded into JSON. */
  readonly events: AsyncGenerator<ResponseStreamEvent>;
}

/**
 * Creates responses. Nothing here knows HTTP: the engine takes a validated
 * request, the caller's tenant and an abort signal, and hands back an event
 * stream.
 */
export class ResponseEngine {
  readonly #options: ResponseEngineOptions;

  constructor(options: ResponseEngineOptions) {
    this.#options = options;
  }

  /**
   * Validates what the schema cannot, assembles the conversation, starts the
   * first model call and returns once the upstream accepted it; a failure
   * before that rejects with a `GatewayError`, so the HTTP layer can still
   * answer with a proper status.
   */
  async createResponse(request: CreateResponseRequest, tenant: string, signal: AbortSignal): Promise<ResponseRun> {
    const model = request.model ?? this.#options.defaultModel;
    if (!model) throw invalidRequest("Missing required parameter: 'model' (no default model is configured).", 'model', 'missing_required_parameter');
    if (request.background) throw invalidRequest('Background responses are not supported.', 'background', 'unsupported_parameter');
    const route = this.#options.router.resolve(model);

    const { history, input } = await buildConversation(this.#options.store, tenant, request);
    if (history.length === 0 && input.length === 0 && !request.instructions) {
      throw invalidRequest("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
    }
    const turnRequest: TurnRequest = {
      model: route.upstreamModel,
      instructions: request.instructions ?? null,
      items: [...history, ...input],
      historyLength: history.length,
      tools: request.tools ?? [],
      toolChoice: request.tool_choice ?? null,
      parallelToolCalls: request.parallel_tool_calls ?? null,
      textFormat: request.text?.format ?? null,
      verbosity: request.text?.verbosity ?? null,
      maxOutputTokens: request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      topP: request.top_p ?? null,
      presencePenalty: request.presence_penalty ?? null,
      frequencyPenalty: request.frequency_penalty ?? null,
      reasoningEffort: request.reasoning?.effort ?? null,
      topLogprobs: request.top_logprobs ?? null,
      logprobs: request.include?.includes('message.output_text.logprobs') === true || (request.top_logprobs ?? 0) > 0,
      safetyIdentifier: request.safety_identifier ?? null,
      promptCacheKey: request.prompt_cache_key ?? null,
      serviceTier: request.service_tier ?? null,
      stream: request.stream === true,
    };
    const turn = await route.provider.startTurn(turnRequest, signal);
    const response: ResponseResource = initialResponse(request, newId('resp'), model, Math.floor(Date.now() / 1000));
    const events = streamResponseEvents(response, turn, signal, {
      beforeTerminal: (final) => this.#persist(request, tenant, final, input),
      onHookFailure: request.stream ? 'fail-response' : 'throw',
    });
    return { id: response.id, events };
  }

  async #persist(request: CreateResponseRequest, tenant: string, response: ResponseResource, input: StoredInputItem[]): Promise<void> {
    if (request.store === false) return;
    await this.#options.store.put({ tenant, response, inputItems: input, previousResponseId: request.previous_response_id ?? null });
  }
}
