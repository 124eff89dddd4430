import { ContextLengthExceeded } from '../errors/context-length-exceeded.ts';
import { invalidRequest } from '../errors/gateway-error.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { ToolContext } from '../executors/tool-executor.ts';
import type { InputTokenCountRequest } from '../protocol/input-token-count-request.ts';
import type { ModelRouter } from '../providers/model-router.ts';
import type { TurnRequest } from '../providers/provider.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import type { ResponseStore } from '../store/response-store.ts';
import { buildConversation } from './conversation.ts';
import { conversationNotFound } from './conversation-claim.ts';
import type { ContextWindows, KnownWindow } from './context-windows.ts';
import { checkHostedToolChoice, declareTools, type HostedToolPolicy } from './declared-tools.ts';
import type { CompactionCodec } from './compaction/compaction-codec.ts';
import { modelInputOf } from './compaction/expand-compactions.ts';
import { routeTargets } from './call-target.ts';
import { estimateTurnTokens } from './token-estimate.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { fitContextWindow } from './truncate-turn.ts';
import { resolveToolChoice } from './resolve-tool-choice.ts';
import { toTurnRequest } from './turn-request.ts';

export interface InputTokenCounterOptions {
  router: ModelRouter;
  store: ResponseStore;
  executors: ExecutorRegistry;
  defaultModel: string | null;
  hostedTools?: HostedToolPolicy;
  conversations?: ConversationStore;
  /** Models' context windows, for `truncation: "auto"`: the count is of what a response would send after truncating. */
  contextWindows?: ContextWindows;
  /** Opens compaction items: the model is sent their summaries, so those are what is counted. */
  compaction?: CompactionCodec;
}

/** How a count was made: by the upstream's own counting endpoint, or estimated by the gateway (token-estimate.ts). */
export type CountedBy = 'provider' | 'estimate';

export interface InputTokenCount {
  inputTokens: number;
  countedBy: CountedBy;
}

/**
 * Counts the input tokens a response to `request` would send its first model
 * call (`POST /v1/responses/input_tokens`): the conversation assembled as a
 * response assembles it — the stored chain or conversation, references
 * resolved, tools declared and offered as the model would see them — then
 * counted by the provider when its upstream can count, estimated otherwise.
 * Under `truncation: "auto"`, what truncation would leave of it. Nothing is
 * stored and no conversation is held.
 */
export class InputTokenCounter {
  readonly #options: InputTokenCounterOptions;

  constructor(options: InputTokenCounterOptions) {
    this.#options = options;
  }

  async count(request: InputTokenCountRequest, options: { tenant: string; signal: AbortSignal }): Promise<InputTokenCount> {
    const { router, store, executors } = this.#options;
    const model = request.model ?? this.#options.defaultModel;
    if (!model) throw invalidRequest("Missing required parameter: 'model' (no default model is configured).", 'model', 'missing_required_parameter');
    const conversationId = typeof request.conversation === 'string' ? request.conversation : (request.conversation?.id ?? null);
    if (conversationId !== null && request.previous_response_id) {
      throw invalidRequest("'conversation' and 'previous_response_id' cannot be used together: a conversation already carries the earlier turns.", 'conversation', 'invalid_value');
    }
    const route = router.resolve(model);
    const conversationItems = conversationId === null ? null : await this.#conversationItems(options.tenant, conversationId);
    const { history, input, previousOutput, loadedTools } = await buildConversation(store, options.tenant, request, conversationItems);
    if (history.length === 0 && input.length === 0 && !request.instructions) {
      throw invalidRequest("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
    }

    // The tools the model would be offered: the request's, then what executors (MCP servers) offer, as the engine offers them.
    const declared = declareTools(request.tools, this.#options.hostedTools ?? 'omit', loadedTools, (type) => route.provider.runsHostedTool?.(type) === true);
    checkHostedToolChoice(request.tool_choice, declared);
    const functionTools = declared.functions;
    const mcpServers = (request.tools ?? []).flatMap((tool, index) => (tool.type === 'mcp' ? [{ tool, index }] : []));
    const context: ToolContext = { tenant: options.tenant, tools: functionTools, mcpServers, previousOutput, offered: new Map() };
    const declaredNames = new Set(functionTools.map((tool) => tool.name));
    const offers = await executors.prepare(context, options.signal);
    const offered = new Map(offers.offered.filter((tool) => !declaredNames.has(tool.definition.name)).map((tool) => [tool.definition.name, tool.definition]));

    const modelInput = modelInputOf(history, input, { codec: this.#options.compaction ?? null, tenant: options.tenant, inherited: conversationItems ? 'conversation' : 'previous_response_id' });
    const tools = [...functionTools, ...offered.values()];
    const toolChoice = resolveToolChoice(request.tool_choice, offers.offered.filter((tool) => offered.has(tool.definition.name)), declared, tools);
    const whole = toTurnRequest(request, route.upstreamModel, modelInput, history.length, tools, declared.hosted, toolChoice);
    const window = request.truncation === 'auto' ? (this.#options.contextWindows?.lookupAny(model, routeTargets(route)) ?? null) : null;
    const turn = window ? await truncated(whole, window) : whole;
    if (route.provider.countInputTokens) {
      try {
        return { inputTokens: await route.provider.countInputTokens(turn, options.signal), countedBy: 'provider' };
      } catch (error) {
        // A server of the provider's wire without its counting endpoint (vLLM's Responses API has none): estimated, as for a wire without one.
        if (!(error instanceof GatewayError) || error.code !== 'upstream_endpoint_missing') throw error;
      }
    }
    return { inputTokens: (await estimateTurnTokens(turn)).total, countedBy: 'estimate' };
  }

  async #conversationItems(tenant: string, conversationId: string) {
    const conversations = this.#options.conversations;
    if (!conversations) throw invalidRequest("'conversation' is not available on this gateway.", 'conversation', 'unsupported_parameter');
    const items = await conversations.items(tenant, conversationId);
    if (items === null) throw conversationNotFound(conversationId);
    return items;
  }
}

/** What a response would send under `truncation: "auto"`; when even that is too long (the response would be refused), the whole input is counted. */
async function truncated(turn: TurnRequest, window: KnownWindow): Promise<TurnRequest> {
  try {
    return (await fitContextWindow(turn, window)).request;
  } catch (error) {
    if (error instanceof ContextLengthExceeded) return turn;
    throw error;
  }
}
