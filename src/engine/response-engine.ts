import { calledTarget, routedCalls } from './call-target.ts';
import { invalidRequest } from '../errors/gateway-error.ts';
import { refuseUnsupportedParameters } from '../protocol/unsupported-parameters.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import { ToolErrorSanitizer } from '../executors/sanitize-tool-error.ts';
import type { OfferedTool, ToolContext } from '../executors/tool-executor.ts';
import type { CreateResponseRequest } from '../protocol/create-response-request.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';
import type { ModelRoute, ModelRouter } from '../providers/model-router.ts';
import type { Provider, TurnRequest, TurnStream } from '../providers/provider.ts';
import { toTurnRequest } from './turn-request.ts';
import { allowedToolNames, resolveToolChoice } from './resolve-tool-choice.ts';
import { PreparedStateProvider } from './prepared-state-provider.ts';
import type { ConversationTurn, ResponseStore, StoredInputItem, StoredResponse } from '../store/response-store.ts';
import { newId } from '../util/ids.ts';
import { SecretRedactor } from '../util/secret-redactor.ts';
import type { BackgroundRunner } from './background-runner.ts';
import type { ConnectionResponses } from './connection-responses.ts';
import { buildConversation, conversationAtHand } from './conversation.ts';
import { ConversationClaim, conversationNotFound } from './conversation-claim.ts';
import { ContextWindows } from './context-windows.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import { checkHostedToolChoice, declareTools, type DeclaredTools, type HostedToolPolicy } from './declared-tools.ts';
import { initialResponse } from './initial-response.ts';
import { observesModelCalls, safeObserver, type LoopObserver, type ObservedResponse, type ResponseObserverFactory } from './loop-observer.ts';
import { ObservedProvider } from './observed-provider.ts';
import { OfferedToolRefusals } from './offered-tool-refusals.ts';
import { describeFailure, ResponseLifecycle } from './response-lifecycle.ts';
import { runResponseLoop, type Delivery, type LoopLimits, type LoopPolicy } from './response-loop.ts';
import { planResume } from './resume-paused-turn.ts';
import type { ApprovalAnswer, ApprovalAnswers } from './approval-answers.ts';
import { InFlightResponses, LeaseLost, ResponseDeadline } from './response-deadline.ts';
import type { CompactionCodec } from './compaction/compaction-codec.ts';
import { modelInputOf } from './compaction/expand-compactions.ts';
import { checkNewItemIds } from './check-new-item-ids.ts';
import { CompactingProvider } from './compaction/compacting-provider.ts';
import { asksForCompaction } from './compaction/compaction-trigger.ts';
import { TruncatingProvider } from './truncating-provider.ts';
import { controlsOff, resolveLoopControls, type LoopControls, type OperatorLoopControls } from './controls/loop-controls.ts';
import { fitsTextFormat, terminalRunWhilePaused } from './controls/terminal-tools.ts';
import { modelCallOf, modelOutputOf } from './client-call-kinds.ts';

export interface ResponseEngineOptions {
  router: ModelRouter;
  store: ResponseStore;
  executors: ExecutorRegistry;
  limits: LoopLimits & {
    /** Longest a whole response may take, every turn and tool call included. */
    deadlineMs: number;
  };
  /** Serves requests that name no model; without one such requests are a 400. */
  defaultModel: string | null;
  /** Hosted tools (web_search, …) no upstream here runs: left out and reported (default), or refused. */
  hostedTools?: HostedToolPolicy;
  /** Configured credentials, blanked out of a failed response's message (an upstream may echo its key). */
  secrets?: SecretRedactor;
  /** Cleans tool error outputs (stack traces, internal addresses, secrets); by default one knowing only `secrets`. */
  toolErrors?: ToolErrorSanitizer;
  /** Conversations (`conversation` on a request): read before the response, appended to when it ends. */
  conversations?: ConversationStore;
  /** Runs `background: true` responses detached from their connection. */
  background?: BackgroundRunner;
  /** Takes each approval request a continuation answers, so that no other continuation answers it again (runs its gated call once more). */
  approvals?: ApprovalAnswers;
  /** Opens compaction items in the input and history (their summaries are what the model sees); without it they are a 400. */
  compaction?: CompactionCodec;
  /** Models' context windows, configured and learned, for `truncation: "auto"` (shared with token counting). */
  contextWindows?: ContextWindows;
  /** The loop controls (`loop.*` of the configuration): defaults and the limits on a request's `"loopgate:loop"`; all off when absent. */
  controls?: OperatorLoopControls;
  /** Observers every response gets, whatever its transport (metrics, traces, the inspector): each factory makes one per response. */
  responseObservers?: readonly ResponseObserverFactory[];
}

export interface CreateResponseOptions {
  tenant: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  observers?: readonly LoopObserver[];
  /** The connection's own latest response (WebSocket): continued from before the store, and replaced by this one when it ends. */
  connection?: ConnectionResponses;
  /**
   * Runs once the first model call is assembled — conversation, tools and
   * all — before it is sent (or the response queued); throwing refuses the
   * response with nothing sent upstream (the rate limits' token pre-check).
   */
  admit?(firstCall: TurnRequest): Promise<void>;
  /**
   * `final` when the transport keeps only the terminal event (a JSON answer):
   * the loop then skips building the events nobody reads. Default `events`.
   */
  delivery?: Delivery;
  /**
   * Its retry runs again should it be cut off (its Idempotency-Key is let
   * go: http/idempotency.ts): a response whose client went away then adds
   * nothing to its conversation, or the retry would add the turn a second time.
   */
  rerunIfInterrupted?: boolean;
}

/** A response whose first model call has been accepted by the upstream. */
export interface ResponseRun {
  /** The one ordered event stream, in batches (each step's events), for SSE as it comes or folded into JSON. */
  readonly events: AsyncGenerator<ResponseStreamEvent[]>;
  /** The provider serving it and the model name it was sent under (for logs). */
  readonly provider: string;
  readonly upstreamModel: string;
  /** For a routed alias, the deployment that served the first model call (the client is told in a header); else null. */
  readonly deployment: string | null;
  /** Hosted tools the request named that the model was not offered (the client is told in a header). */
  readonly omittedTools: readonly string[];
  /** A background response's record as first stored (status `queued`). */
  readonly queued: StoredResponse | null;
  /** Releases what the response holds when its events will never be read (a background start that failed, with `reason`): its observers hear it refused. */
  abandon(reason?: unknown): void;
}

/** A background response, stored as `queued` and running detached. */
export interface BackgroundStart {
  readonly record: StoredResponse;
  readonly provider: string;
  readonly upstreamModel: string;
  readonly omittedTools: readonly string[];
}

/**
 * Creates responses. Nothing here knows HTTP: the engine takes a validated
 * request, the caller's tenant and an abort signal, and hands back an event
 * stream that runs the agentic loop.
 */
export class ResponseEngine {
  readonly #options: ResponseEngineOptions;
  /** Responses running now, so a shutdown can end each with a terminal event. */
  readonly #inFlight = new InFlightResponses();
  readonly #windows: ContextWindows;
  readonly #toolErrors: ToolErrorSanitizer;
  /** Blanks configured credentials out of a message (an upstream may echo its key). */
  readonly #redactSecrets: (text: string) => string;
  readonly #secrets: SecretRedactor;

  constructor(options: ResponseEngineOptions) {
    this.#options = options;
    this.#windows = options.contextWindows ?? new ContextWindows();
    this.#toolErrors = options.toolErrors ?? (options.secrets ? new ToolErrorSanitizer({ servers: [], secrets: options.secrets }) : ToolErrorSanitizer.basic);
    const secrets = options.secrets;
    this.#secrets = secrets ?? SecretRedactor.none;
    this.#redactSecrets = secrets ? (text) => secrets.redact(text) : (text) => text;
  }

  /** How many responses are running. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Ends every running response now: each stops its model call and tools and
   * finishes as `incomplete` (reason `server_shutdown`), stored as such, with
   * its terminal event sent to the client.
   */
  shutDown(): void {
    for (const deadline of this.#inFlight.all()) deadline.shutDown();
  }

  /**
   * Starts a `background: true` response: validated and stored as `queued`
   * before this returns, then run to the end by the background runner,
   * whatever happens to the connection that asked for it. Failures of the
   * model call itself end the response as `failed` (nothing is running that
   * an HTTP status could still describe).
   */
  async createBackground(request: CreateResponseRequest, options: Omit<CreateResponseOptions, 'signal'> & { requestId?: string }): Promise<BackgroundStart> {
    const runner = this.#options.background;
    if (!runner) throw invalidRequest('Background responses are not enabled on this gateway.', 'background', 'unsupported_parameter');
    const controller = new AbortController();
    const run = await this.createResponse(request, { ...options, signal: controller.signal });
    const record = run.queued!;
    try {
      await runner.start(record, run.events, (how) => controller.abort(how === 'owner_lost' ? new LeaseLost() : new Error('The response was cancelled.')), options.requestId ?? null);
    } catch (error) {
      run.abandon(error);
      throw error;
    }
    return { record, provider: run.provider, upstreamModel: run.upstreamModel, omittedTools: run.omittedTools };
  }

  /**
   * Validates what the schema cannot, assembles the conversation and starts
   * the first model call, returning once the upstream accepted it; a failure
   * before that rejects with a `GatewayError`, so the HTTP layer can still
   * answer with a proper status. (A continuation that must first run the
   * paused turn's server-side tools starts its model call inside the stream.)
   */
  async createResponse(request: CreateResponseRequest, options: CreateResponseOptions): Promise<ResponseRun> {
    const startedAt = performance.now();
    const { router, store, limits } = this.#options;
    const model = request.model ?? this.#options.defaultModel;
    if (!model) throw invalidRequest("Missing required parameter: 'model' (no default model is configured).", 'model', 'missing_required_parameter');
    if (request.background && request.store === false) throw invalidRequest('Background responses must be stored: background=true requires store to be true (or left out).', 'background', 'invalid_value');
    if (request.background && !this.#options.background) throw invalidRequest('Background responses are not enabled on this gateway.', 'background', 'unsupported_parameter');
    refuseUnsupportedParameters(request);
    const conversationId = typeof request.conversation === 'string' ? request.conversation : (request.conversation?.id ?? null);
    if (conversationId !== null && request.previous_response_id) {
      throw invalidRequest("'conversation' and 'previous_response_id' cannot be used together: a conversation already carries the earlier turns.", 'conversation', 'invalid_value');
    }
    const route = router.resolve(model);
    const compacting = asksForCompaction(request, this.#options.compaction != null);
    // A response that generates nothing, or only a summary, has no answer for the loop's controls to judge.
    const controls = request.generate === false || compacting ? resolveLoopControls(controlsOff(limits.maxTurns), { ...request, 'loopgate:loop': null }) : resolveLoopControls(this.#options.controls ?? controlsOff(limits.maxTurns), request);
    // A response that must be stored is not worth a model call the store could not keep.
    if (request.store !== false && !store.isReady()) await store.ensureWritable();

    const responseId = newId('resp');
    const claim = conversationId === null ? null : await ConversationClaim.take(this.#conversations(), options.tenant, conversationId, responseId);
    try {
      return await this.#prepare(request, options, { model, route, responseId, claim, controls, compacting, startedAt });
    } catch (error) {
      await claim?.abandon();
      throw error;
    }
  }

  async #prepare(request: CreateResponseRequest, options: CreateResponseOptions, taken: { model: string; route: ModelRoute; responseId: string; claim: ConversationClaim | null; controls: LoopControls; compacting: boolean; startedAt: number }): Promise<ResponseRun> {
    const { store, limits } = this.#options;
    const { model, route, responseId, claim, controls, compacting, startedAt } = taken;
    const conversationItems = claim ? await this.#conversations().items(options.tenant, claim.conversationId) : null;
    if (conversationItems && typeof request.input !== 'string') checkNewItemIds(conversationItems, request.input ?? [], 'input');
    if (claim && conversationItems === null) throw conversationNotFound(claim.conversationId);
    const { history, input, previous, previousOutput, loadedTools, turns } = conversationAtHand(request, conversationItems) ?? (await buildConversation(store, options.tenant, request, conversationItems, options.connection ?? null));
    if (history.length === 0 && input.length === 0 && !request.instructions) {
      throw invalidRequest("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
    }
    const policy: Omit<LoopPolicy, 'allowed'> = {
      toolChoiceNone: request.tool_choice === 'none',
      parallel: request.parallel_tool_calls !== false,
      maxToolCalls: request.max_tool_calls ?? null,
    };
    // Hosted tools the serving upstream runs are offered to it; the others follow the policy.
    const declared = declareTools(request.tools, this.#options.hostedTools ?? 'omit', loadedTools, (type) => route.provider.runsHostedTool?.(type) === true);
    checkHostedToolChoice(request.tool_choice, declared);
    // A compaction offers the summarising call no tools: no MCP server is asked for its list.
    const mcpServers = compacting ? [] : (request.tools ?? []).flatMap((tool, index) => (tool.type === 'mcp' ? [{ tool, index }] : []));
    const deadline = new ResponseDeadline(options.signal, limits.deadlineMs, this.#inFlight);
    try {
      return await this.#start(request, options, { route, model, responseId, claim, history, input, previous, previousOutput, turns, declared, mcpServers, policy, controls, compacting, deadline, startedAt });
    } catch (error) {
      deadline.dispose();
      throw error;
    }
  }

  async #start(
    request: CreateResponseRequest,
    options: CreateResponseOptions,
    prepared: {
      route: ModelRoute;
      model: string;
      responseId: string;
      claim: ConversationClaim | null;
      history: InputItem[];
      input: StoredInputItem[];
      previous: ConversationTurn | null;
      previousOutput: OutputItem[];
      turns: readonly ConversationTurn[];
      declared: DeclaredTools;
      mcpServers: ToolContext['mcpServers'];
      policy: Omit<LoopPolicy, 'allowed'>;
      controls: LoopControls;
      compacting: boolean;
      deadline: ResponseDeadline;
      startedAt: number;
    },
  ): Promise<ResponseRun> {
    const { executors, limits } = this.#options;
    const { route, model, responseId, claim, history, input, previous, previousOutput, turns, declared, mcpServers, controls, compacting, deadline, startedAt } = prepared;
    const functionTools = declared.functions;
    const signal = deadline.signal;
    // Compaction items become their summaries here, so one that does not open is a 400 before anything starts.
    const modelInput = modelInputOf(history, input, { codec: this.#options.compaction ?? null, tenant: options.tenant, inherited: claim ? 'conversation' : 'previous_response_id' });

    // What executors offer (MCP tools) is settled before the stream starts, so a refused server URL is a 400.
    const baseContext: ToolContext = { tenant: options.tenant, tools: functionTools, mcpServers, previousOutput, offered: NOTHING_OFFERED };
    const preparing = executors.prepare(baseContext, signal);
    const offers = preparing instanceof Promise ? await preparing : preparing;
    // Most requests are offered nothing (no MCP server): their context and tool list are the ones they came with.
    const toolContext: ToolContext = offers.offered.length === 0 ? baseContext : { ...baseContext, offered: offeredBesides(offers.offered, functionTools) };
    const tools = toolContext.offered.size === 0 ? functionTools : [...functionTools, ...[...toolContext.offered.values()].map((tool) => tool.definition)];
    // A choice naming an MCP server's tools is known only now, in the names they are offered under.
    const toolChoice = resolveToolChoice(request.tool_choice, toolContext.offered.values(), declared, tools);
    const policy: LoopPolicy = { ...prepared.policy, allowed: allowedToolNames(toolChoice) };
    // A compaction does not go on with a paused turn: its summary stands for that turn, open calls included (the compactor closes them in its window).
    const resume = compacting ? null : planResume(previous, input, executors, toolContext, policy);
    // A terminal tool that ran while the response waited for the client ends it once the client has answered, with no model call.
    const ranWhilePaused = controls.terminalTools.size > 0 && !compacting && previous && !resume?.closed.length && answersCallOf(previous, input) ? terminalRunWhilePaused(previous.output, controls.terminalTools) : null;
    const terminalRan = ranWhilePaused && (await fitsTextFormat(ranWhilePaused.output, request.text?.format ?? null, { toolContext, signal })) ? ranWhilePaused : null;

    const turnRequest = toTurnRequest(request, route.upstreamModel, modelInput, history.length, tools, declared.hosted, toolChoice);
    // Every model call of the loop fits the context window, or learns it from the upstream's refusal.
    const truncating = request.truncation === 'auto' ? new TruncatingProvider(route, this.#windows, model) : null;
    // A request its rate limits refuse (the first call's tokens) never starts: no observer hears of it.
    // Awaited only when there is one: `await undefined` costs a promise and a tick on every response.
    if (options.admit) await options.admit(turnRequest);
    // Last of the refusals before anything runs: an answer taken is never given back (the approved call may run from here on).
    if (resume && this.#options.approvals) {
      const answers = approvalAnswersIn(input);
      if (answers.length > 0) await this.#options.approvals.take(options.tenant, answers, responseId);
    }
    const createdAt = Math.floor(Date.now() / 1000);
    const observed: ObservedResponse = { id: responseId, tenant: options.tenant, background: request.background === true, createdAt, routed: route.calledBy !== undefined, callsModel: request.generate !== false, cleanToolError: (error) => this.#toolErrors.sanitize(error, toolContext) };
    const observers = this.#responseObservers(observed);
    if (options.observers) observers.push(...options.observers);
    const observer = safeObserver(observers);
    // Model calls are watched, each reported with its request, usage and timings, only for observers that want them (traces).
    // A refusal of a tool the gateway offered (an MCP server's) is the operator's to fix, not the client's (offered-tool-refusals.ts).
    const serving = toolContext.offered.size === 0 ? (truncating ?? route.provider) : new OfferedToolRefusals(truncating ?? route.provider, toolContext.offered);
    // `generate: false` prepares the state and calls no model: no model call to watch either.
    // A window to compact is summarised, and the summary sealed, in place of an answer (compaction/compacting-provider.ts).
    const answering = compacting ? new CompactingProvider(serving, this.#options.compaction!, { tenant: options.tenant, model }) : serving;
    const provider = request.generate === false ? new PreparedStateProvider(serving) : observesModelCalls(observers) ? new ObservedProvider(answering, observer, routedCalls(route)) : answering;
    const target = calledTarget(route);
    const lifecycle = new ResponseLifecycle(observer, {
      responseId,
      model,
      provider: target.provider,
      upstreamModel: target.upstreamModel,
      tenant: options.tenant,
      stream: request.stream === true,
      background: request.background === true,
      conversationId: claim?.conversationId ?? null,
      previousResponseId: request.previous_response_id ?? null,
      startedAt,
    }, () => calledTarget(route), this.#redactSecrets);
    // A background response starts its model call inside the loop: a refusal then ends it as `failed`.
    let firstTurn: TurnStream | null = null;
    if (!resume && !terminalRan && !request.background) {
      const calledAt = performance.now();
      try {
        firstTurn = await startFirstTurn(provider, turnRequest, deadline);
      } catch (error) {
        // The upstream refused it at once: the client gets the HTTP error, no response.
        observer.modelCallFailed({ turn: 1, provider: provider.name, ...describeFailure(error) });
        lifecycle.refused(error);
        throw error;
      }
      // Stopped (the client gone, the deadline, a shutdown) before the upstream answered: the response ends with no turn of the loop's.
      if (firstTurn === null) tellCutOffFirstTurn(observer, calledAt);
    }
    const response: ResponseResource = initialResponse(request, responseId, model, createdAt, toolChoice);
    const servedBy = route.servedBy?.() ?? null;
    if (servedBy) response['loopgate:deployment'] = servedBy.deployment;
    // Said in the response itself too, for transports without headers (WebSocket) and for whoever reads it back.
    if (declared.omitted.length > 0) response['loopgate:omitted_tools'] = declared.omitted;
    // A compaction_trigger asks for the compaction: it is no item of the response's input (nor of a conversation); its answer, the compaction item, is.
    const kept = compacting ? input.filter((item) => item.type !== 'compaction_trigger') : input;
    let queued: StoredResponse | null = null;
    if (request.background) {
      response.status = 'queued';
      response.background = true;
      // Stored by the background runner, once it holds the response's lease.
      queued = { tenant: options.tenant, response: structuredClone(response), inputItems: kept, previousResponseId: request.previous_response_id ?? null };
    }
    const events = runResponseLoop({
      response,
      provider,
      request: turnRequest,
      firstTurn,
      resume,
      terminalRan,
      announcements: offers.items,
      registry: executors,
      toolContext,
      namespaced: declared.namespaced,
      policy,
      limits,
      controls,
      delivery: options.delivery ?? 'events',
      toolErrors: this.#toolErrors,
      signal,
      deadline,
      observer,
      hooks: {
        beforeTerminal: async (final) => {
          if (final.error) this.#secrets.redactFields(final.error);
          if (truncating?.report) final['loopgate:truncation'] = truncating.report;
          // A background response's first call runs inside the loop: its deployment is known only now.
          const deployment = route.servedBy?.()?.deployment;
          if (deployment && !final['loopgate:deployment']) final['loopgate:deployment'] = deployment;
          // Asked before the response is stored as ended: one that lost its conversation is not stored as having added to it.
          if (claim) await claim.confirm(final, options.rerunIfInterrupted === true);
          if (request.store !== false) await this.#options.store.put({ tenant: options.tenant, response: final, inputItems: kept, previousResponseId: request.previous_response_id ?? null });
          if (claim) await claim.finish(final, kept, options.rerunIfInterrupted === true);
          // A failed response is not continued from (and the transport evicts the one it continued).
          if (options.connection && final.status !== 'failed') options.connection.remember([...turns, { responseId: final.id, status: final.status, inputItems: kept, output: final.output }]);
        },
        // Only a JSON answer can still be an HTTP error; a background response's client was answered when it was queued, and reads its ending from its events.
        onHookFailure: request.stream || request.background ? 'fail-response' : 'throw',
        ended: (final, failure, spent) => {
          // A response that ended without finishing its claim (its final write failed, or the stream broke) releases the conversation, adding nothing.
          if (claim) void claim.abandon();
          lifecycle.streamEnded(final, failure, spent);
        },
      },
    });
    return new StartedRun(events, route, declared.omitted, queued, (reason) => {
      deadline.dispose();
      void claim?.abandon();
      lifecycle.refused(reason ?? new Error('The response could not be started.'));
    });
  }

  /** A new array of this response's observers (the caller may add to it). */
  #responseObservers(response: ObservedResponse): LoopObserver[] {
    const observers: LoopObserver[] = [];
    for (const make of this.#options.responseObservers ?? []) {
      try {
        const observer = make(response);
        if (observer) observers.push(observer);
      } catch {
        // Observers are bystanders, their factories too.
      }
    }
    return observers;
  }

  #conversations(): ConversationStore {
    const conversations = this.#options.conversations;
    if (!conversations) throw invalidRequest("'conversation' is not available on this gateway.", 'conversation', 'unsupported_parameter');
    return conversations;
  }
}

/**
 * A first model call the response's own stop cut off (the client gone, the
 * deadline, a shutdown) before the upstream answered was a model call all the
 * same: its turn is told as the loop tells its own (metrics count it, the
 * inspector shows it), as traces already show its span.
 */
function tellCutOffFirstTurn(observer: Required<LoopObserver>, calledAt: number): void {
  observer.turnStarted({ turn: 1 });
  observer.turnEnded({ turn: 1, toolCalls: 0, finish: null, durationMs: performance.now() - calledAt });
}

/**
 * The first model call, whose failure is still an HTTP error. A response
 * stopped meanwhile — its client gone, its deadline passed, the gateway
 * shutting down — is not an error: it starts with no turn and ends
 * `cancelled` or `incomplete` with that reason, stored as any stopped
 * response is (a JSON request's whole generation happens here).
 */
function startFirstTurn(provider: Provider, request: TurnRequest, deadline: ResponseDeadline): Promise<TurnStream | null> {
  const stopped = (error: unknown): null => {
    if (deadline.cause !== null) return null;
    throw error;
  };
  // Not an async function (one promise fewer per response); a provider that throws rather than rejects is caught all the same.
  try {
    return provider.startTurn(request, deadline.signal).catch(stopped);
  } catch (error) {
    return Promise.reject(error).catch(stopped);
  }
}

/** Nothing offered by an executor: shared, never written to (the context's map is read-only). */
const NOTHING_OFFERED: ReadonlyMap<string, OfferedTool> = new Map();

/** The executors' tools by name, but for those the request declares itself (the client's own function wins). */
function offeredBesides(offered: readonly OfferedTool[], declared: readonly { name: string }[]): ReadonlyMap<string, OfferedTool> {
  const declaredNames = new Set(declared.map((tool) => tool.name));
  return new Map(offered.filter((tool) => !declaredNames.has(tool.definition.name)).map((tool) => [tool.definition.name, tool]));
}

/**
 * A started response's handle. A class: its getters live on the prototype,
 * where an object literal with getters is built through V8's slow path on
 * every response.
 */
class StartedRun implements ResponseRun {
  readonly events: AsyncGenerator<ResponseStreamEvent[]>;
  readonly omittedTools: readonly string[];
  readonly queued: StoredResponse | null;
  readonly abandon: (reason?: unknown) => void;
  readonly #route: ModelRoute;

  constructor(events: AsyncGenerator<ResponseStreamEvent[]>, route: ModelRoute, omittedTools: readonly string[], queued: StoredResponse | null, abandon: (reason?: unknown) => void) {
    this.events = events;
    this.#route = route;
    this.omittedTools = omittedTools;
    this.queued = queued;
    this.abandon = abandon;
  }

  // Read when asked: the log line, written at the end, names where the last call went (a routed alias's calls may go to several deployments).
  get provider(): string {
    return calledTarget(this.#route).provider;
  }

  get upstreamModel(): string {
    return calledTarget(this.#route).upstreamModel;
  }

  get deployment(): string | null {
    return this.#route.servedBy?.()?.deployment ?? null;
  }
}

function approvalAnswersIn(input: readonly StoredInputItem[]): ApprovalAnswer[] {
  return input.flatMap((item, index) => (item.type === 'mcp_approval_response' ? [{ approvalRequestId: item.approval_request_id, index }] : []));
}

/** Whether the input answers a call the previous response left open (the client continuing its paused turn): its own call's output, or an approval request's answer. */
function answersCallOf(previous: ConversationTurn, input: readonly StoredInputItem[]): boolean {
  const answered = new Set<string>();
  for (const item of input) {
    const output = modelOutputOf(item);
    if (output) answered.add(output.callId);
    else if (item.type === 'mcp_approval_response') answered.add(item.approval_request_id);
  }
  return answered.size > 0 && previous.output.some((item) => answered.has(item.type === 'mcp_approval_request' ? item.id : (modelCallOf(item)?.callId ?? '')));
}
