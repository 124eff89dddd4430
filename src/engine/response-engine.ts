import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../protocol/create-response-request.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';
import type { ModelRouter } from '../providers/model-router.ts';
import type { TurnRequest } from '../providers/provider.ts';
import { newId } from '../util/ids.ts';
import { initialResponse } from './initial-response.ts';
import { streamResponseEvents } from './response-events.ts';

export interface ResponseEngineOptions {
  router: ModelRouter;
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
 * request and an abort signal and hands back an event stream.
 */
export class ResponseEngine {
  readonly #options: ResponseEngineOptions;

  constructor(options: ResponseEngineOptions) {
    this.#options = options;
  }

  /**
   * Validates what the schema cannot, starts the first model call and returns
   * once the upstream accepted it; a failure before that rejects with a
   * `GatewayError`, so the HTTP layer can still answer with a proper status.
   */
  async createResponse(request: CreateResponseRequest, signal: AbortSignal): Promise<ResponseRun> {
    const model = request.model ?? this.#options.defaultModel;
    if (!model) throw invalidRequest('Missing required parameter: \'model\' (no default model is configured).', 'model', 'missing_required_parameter');
    if (request.background) throw invalidRequest('Background responses are not supported.', 'background', 'unsupported_parameter');
    if (request.previous_response_id) {
      throw notFound(`Previous response with id '${request.previous_response_id}' not found.`, 'previous_response_not_found', 'previous_response_id');
    }
    const items = inputItems(request);
    if (items.length === 0 && !request.instructions) throw invalidRequest('Missing required parameter: \'input\'.', 'input', 'missing_required_parameter');

    const route = this.#options.router.resolve(model);
    const turnRequest: TurnRequest = {
      model: route.upstreamModel,
      instructions: request.instructions ?? null,
      items,
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
    return { id: response.id, events: streamResponseEvents(response, turn, signal) };
  }
}

function inputItems(request: CreateResponseRequest): InputItem[] {
  const input = request.input;
  if (input == null) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  input.forEach((item, index) => {
    // Item references resolve against stored responses; nothing is stored yet.
    if (item.type === 'item_reference') throw notFound(`Item with id '${item.id}' not found.`, 'item_not_found', `input[${index}].id`);
  });
  return input;
}
