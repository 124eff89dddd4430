import { GatewayError } from '../errors/gateway-error.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { ToolErrorSanitizer } from '../executors/sanitize-tool-error.ts';
import type { CallPresentation, ToolCall, ToolContext, ToolExecutor } from '../executors/tool-executor.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent, ResponseStreamEventBody, TerminalEventType } from '../protocol/stream-events.ts';
import type { Provider, TurnFinish, TurnRequest, TurnStream } from '../providers/provider.ts';
import type { ClientToolName } from './declared-tools.ts';
import type { LoopObserver } from './loop-observer.ts';
import { callItemsFor } from './call-items.ts';
import { OutputBuilder } from './output-builder.ts';
import { errorOutput, planToolCalls, type PlannedCall, type ToolPolicy } from './plan-tool-calls.ts';
import { NOT_RUN_MESSAGE, type ResumePlan } from './resume-paused-turn.ts';
import { runToolCalls } from './run-tool-calls.ts';
import { storedItemToInput } from './stored-item-to-input.ts';
import { UsageTotal } from './usage-total.ts';
import type { ResponseDeadline } from './response-deadline.ts';

export interface LoopLimits {
  /** Provider calls per response (default 10); more ends `incomplete` with reason `max_turns`. */
  maxTurns: number;
  /** Per-call limit for executors that set none. */
  toolTimeoutMs: number;
  /** Stop after this many failed tool calls in a row; 0 turns the limit off (the default, as seed 004 asks). */
  maxConsecutiveToolFailures: number;
  /** The status a paused response reports: `requires_action`, or `completed` for clients that need OpenAI's exact behaviour. */
  pausedStatus: 'requires_action' | 'completed';
}

export interface LoopPolicy extends ToolPolicy {
  /** `tool_choice: "none"`: tools are sent, calls are returned, nothing runs. */
  toolChoiceNone: boolean;
  parallel: boolean;
  /** `max_tool_calls` of the request: calls, not turns. */
  maxToolCalls: number | null;
}

export interface ResponseEventHooks {
  /** Runs once the response is final, before its terminal event is sent — a client never sees `completed` for what it cannot fetch. */
  beforeTerminal(response: ResponseResource): Promise<void>;
  /** A `beforeTerminal` failure ends a started stream with `response.failed`, or propagates (JSON requests can still answer with an HTTP error). */
  onHookFailure: 'fail-response' | 'throw';
}

export interface ResponseLoop {
  response: ResponseResource;
  provider: Provider;
  /** The first turn's request; its `items` are the conversation before this response's output. */
  request: TurnRequest;
  /** The first turn, already started (so an immediate upstream failure became an HTTP status); null to start it here. */
  firstTurn: TurnStream | null;
  resume: ResumePlan | null;
  /** Items announcing what executors offered (`mcp_list_tools`), added before the first turn. */
  announcements: readonly OutputItem[];
  registry: ExecutorRegistry;
  toolContext: ToolContext;
  /** Namespaced functions: the name the model calls → the name and namespace the client sees. */
  namespaced?: ReadonlyMap<string, ClientToolName>;
  policy: LoopPolicy;
  limits: LoopLimits;
  /** Cleans tool error outputs before the model and the client see them. */
  toolErrors: ToolErrorSanitizer;
  /** Aborted when the client goes away or the deadline passes. */
  signal: AbortSignal;
  /** The response's deadline: tells the two apart, and is disposed when the stream ends. */
  deadline: ResponseDeadline;
  observer: Required<LoopObserver>;
  hooks: ResponseEventHooks;
}

type Ending =
  | { status: 'completed' | 'requires_action' | 'cancelled' }
  | { status: 'incomplete'; reason: string }
  | { status: 'failed'; code: string; message: string };

/**
 * One response as one ordered event stream, across every turn of the agentic
 * loop (seed 004): a turn is one provider call plus the tool calls it made;
 * server-side calls run concurrently and their outputs go back to the model
 * until it answers, a client call pauses the response (`requires_action`), a
 * limit is reached, the request is cancelled, or something fails. Written
 * once for both transports; this function alone assigns `sequence_number`.
 */
export async function* runResponseLoop(loop: ResponseLoop): AsyncGenerator<ResponseStreamEvent[]> {
  try {
    yield* runLoop(loop);
  } finally {
    loop.deadline.dispose();
  }
}

/**
 * Events travel in batches — everything one step produced — because each
 * hop through an async generator costs a promise: a response is a handful of
 * batches, not dozens of single events.
 */
async function* runLoop(loop: ResponseLoop): AsyncGenerator<ResponseStreamEvent[]> {
  let sequence = 0;
  let pending: ResponseStreamEventBody[] = [];
  const emit = (event: ResponseStreamEventBody) => pending.push(event);
  /** Numbers what is pending and hands it over. */
  const drain = (): ResponseStreamEvent[] => {
    const batch = pending as ResponseStreamEvent[];
    for (const body of batch) body.sequence_number = sequence++;
    pending = [];
    return batch;
  };
  const stamp = (body: ResponseStreamEventBody): ResponseStreamEvent[] => {
    emit(body);
    return drain();
  };

  const { response, observer } = loop;
  // A background response is announced `queued`; it runs from here on.
  emit({ type: 'response.created', response: { ...response, output: [] } });
  response.status = 'in_progress';
  emit({ type: 'response.in_progress', response: { ...response, output: [] } });

  const itemsOf = (name: string) => callItemsFor(loop.toolContext.offered.get(name)?.presentation ?? { kind: 'function' });
  const builder = new OutputBuilder((name) => itemsOf(name).hidesCall, (name) => loop.namespaced?.get(name) ?? null);
  const usage = new UsageTotal();
  const tools = { run: 0, consecutiveFailures: 0 };
  let ending: Ending | null = null;

  /** Adds the item a call's result goes into (its kind decides which: call-items.ts). */
  const openResult = (call: ToolCall, approvalRequestId?: string, presentation?: CallPresentation) =>
    (presentation ? callItemsFor(presentation) : itemsOf(call.name)).openResult(builder, call, emit, approvalRequestId);

  /** Runs planned calls, streaming each output as its result arrives; returns false when a limit ended the loop. */
  async function* execute(planned: readonly PlannedCall[], closed: readonly ToolCall[], turn: number): AsyncGenerator<ResponseStreamEvent[], boolean> {
    const handles = new Map<string, (output: string, isError: boolean) => void>();
    for (const entry of planned) handles.set(entry.call.callId, openResult(entry.call, 'approvalRequestId' in entry ? entry.approvalRequestId : undefined, 'presentation' in entry ? entry.presentation : undefined));
    for (const call of closed) handles.set(call.callId, openResult(call));
    for (const entry of planned) if (entry.route === 'rejected') finish(entry.call, errorOutput(entry.error), true);
    for (const call of closed) finish(call, errorOutput(NOT_RUN_MESSAGE), false);
    if (pending.length > 0) yield drain();

    const server = planned.filter((entry): entry is { call: ToolCall; route: 'server'; executor: ToolExecutor } => entry.route === 'server');
    tools.run += server.length;
    const arrived: { index: number; output: string; isError: boolean }[] = [];
    let wake: (() => void) | null = null;
    const all = runToolCalls(server, {
      context: loop.toolContext,
      parallel: loop.policy.parallel,
      defaultTimeoutMs: loop.limits.toolTimeoutMs,
      signal: loop.signal,
      observer,
      errors: loop.toolErrors,
      turn,
      onResult: (index, result) => {
        arrived.push({ index, ...result });
        wake?.();
      },
    });
    for (let finished = 0; finished < server.length; ) {
      if (arrived.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      for (const result of arrived.splice(0)) {
        finish(server[result.index]!.call, result.output, result.isError);
        finished++;
      }
      if (pending.length > 0) yield drain();
    }
    await all;
    const limit = loop.limits.maxConsecutiveToolFailures;
    if (limit > 0 && tools.consecutiveFailures >= limit) {
      ending = { status: 'failed', code: 'tool_failure_limit', message: `${tools.consecutiveFailures} tool calls in a row failed; the limit is ${limit}.` };
      return false;
    }
    return true;

    function finish(call: ToolCall, output: string, isError: boolean): void {
      handles.get(call.callId)!(output, isError);
      tools.consecutiveFailures = isError ? tools.consecutiveFailures + 1 : 0;
    }
  }

  try {
    for (const item of loop.announcements) builder.addItem(item, emit);
    if (pending.length > 0) yield drain();
    if (loop.resume && !(yield* execute(loop.resume.calls, loop.resume.closed, 0))) return yield* finalize();
    for (let turn = 1; ending === null && !loop.signal.aborted; turn++) {
      if (turn > loop.limits.maxTurns) {
        ending = { status: 'incomplete', reason: 'max_turns' };
        break;
      }
      const started = performance.now();
      observer.turnStarted({ turn });
      builder.startTurn();
      const stream =
        turn === 1 && loop.firstTurn
          ? loop.firstTurn
          : await loop.provider.startTurn({ ...loop.request, items: [...loop.request.items, ...builder.output.flatMap(storedItemToInput)] }, loop.signal);
      let finish: TurnFinish | null = null;
      let failure: { code: string; message: string } | null = null;
      for await (const event of stream) {
        if (event.type === 'finish') finish = event.finish;
        else if (event.type === 'usage') usage.add(event.usage);
        else if (event.type === 'error') {
          failure = { code: event.code, message: event.message };
          break;
        } else {
          builder.apply(event, emit);
          if (pending.length > 0) yield drain();
        }
      }
      const cutShort = failure !== null || finish === null || finish.reason === 'length' || finish.reason === 'content_filter';
      builder.closeAll(cutShort ? 'incomplete' : 'completed', emit);
      if (pending.length > 0) yield drain();
      const calls = builder.turnCalls();
      observer.turnEnded({ turn, toolCalls: calls.length, finish: finish?.raw ?? finish?.reason ?? null, durationMs: performance.now() - started });

      if (failure) ending = { status: 'failed', ...failure };
      else if (!finish) ending = { status: 'failed', code: 'upstream_stream_truncated', message: 'The model call ended without a finish reason.' };
      else if (finish.reason === 'length') ending = { status: 'incomplete', reason: 'max_output_tokens' };
      else if (finish.reason === 'content_filter') ending = { status: 'incomplete', reason: 'content_filter' };
      else if (calls.length === 0 || loop.policy.toolChoiceNone || !loop.registry.serverSideAvailable(loop.toolContext)) ending = { status: 'completed' };
      if (ending) break;

      const planned = planToolCalls(calls, loop.registry, loop.toolContext, loop.policy);
      const serverCalls = planned.filter((entry) => entry.route === 'server').length;
      if (loop.policy.maxToolCalls !== null && tools.run + serverCalls > loop.policy.maxToolCalls) {
        ending = { status: 'incomplete', reason: 'max_tool_calls' };
        break;
      }
      const waitsForClient = planned.some((entry) => entry.route === 'client');
      const approvals = planned.filter((entry) => entry.route === 'approval');
      if (waitsForClient || approvals.length > 0) {
        // A client call pauses the whole turn; calls that only wait for approval let the others run first.
        // Either way, calls that can never run get their error output now: what is left unanswered is the client's.
        const runNow = planned.filter((entry) => (waitsForClient ? entry.route === 'rejected' : entry.route !== 'approval'));
        if (!(yield* execute(runNow, [], turn))) break;
        for (const { call } of approvals) {
          const request = itemsOf(call.name).approvalRequest(call);
          if (request) builder.addItem(request, emit);
        }
        if (pending.length > 0) yield drain();
        ending = { status: 'requires_action' };
        break;
      }
      if (!(yield* execute(planned, [], turn))) break;
    }
  } catch (error) {
    if (!loop.signal.aborted) {
      ending = error instanceof GatewayError ? { status: 'failed', code: error.code ?? 'upstream_error', message: error.message } : { status: 'failed', code: 'server_error', message: 'The response failed.' };
    }
  }
  return yield* finalize();

  async function* finalize(): AsyncGenerator<ResponseStreamEvent[], void> {
    if (loop.signal.aborted) {
      const cause = loop.deadline.cause ?? 'cancelled';
      ending = cause === 'cancelled' ? { status: 'cancelled' } : { status: 'incomplete', reason: cause };
    }
    const final = ending ?? { status: 'failed', code: 'server_error', message: 'The response ended unexpectedly.' };
    builder.closeAll(final.status === 'completed' || final.status === 'requires_action' ? 'completed' : 'incomplete', emit);
    yield* finishResponse(loop, builder, usage, final, stamp);
  }
}


async function* finishResponse(
  loop: ResponseLoop,
  builder: OutputBuilder,
  usage: UsageTotal,
  ending: Ending,
  stamp: (body: ResponseStreamEventBody) => ResponseStreamEvent[],
): AsyncGenerator<ResponseStreamEvent[], void> {
  const { response } = loop;
  response.output = builder.output;
  response.usage = usage.toUsage();
  let terminal: TerminalEventType;
  switch (ending.status) {
    case 'completed':
    case 'requires_action':
      response.status = ending.status === 'requires_action' ? loop.limits.pausedStatus : 'completed';
      response.completed_at = Math.floor(Date.now() / 1000);
      terminal = 'response.completed';
      break;
    case 'cancelled':
      response.status = 'cancelled';
      response.incomplete_details = { reason: 'cancelled' };
      terminal = 'response.incomplete';
      break;
    case 'incomplete':
      response.status = 'incomplete';
      response.incomplete_details = { reason: ending.reason };
      terminal = 'response.incomplete';
      break;
    case 'failed':
      response.status = 'failed';
      response.error = { code: ending.code, message: ending.message };
      terminal = 'response.failed';
      break;
  }
  try {
    await loop.hooks.beforeTerminal(response);
  } catch (error) {
    if (loop.hooks.onHookFailure === 'throw' && !loop.signal.aborted) throw error;
    terminal = 'response.failed';
    response.status = 'failed';
    response.completed_at = null;
    response.incomplete_details = null;
    response.error = error instanceof GatewayError ? { code: error.code ?? 'server_error', message: error.message } : { code: 'server_error', message: 'The response could not be finished.' };
  }
  yield stamp({ type: terminal, response });
}
