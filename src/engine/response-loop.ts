import { GatewayError } from '../errors/gateway-error.ts';
import { MAX_UPSTREAM_ANSWER_CHARS } from '../providers/upstream-answer-limits.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { CallPresentation, ToolContext } from '../executors/tool-executor.ts';
import type { LoopReport } from '../protocol/loop-controls-param.ts';
import type { ToolErrorSanitizer } from '../executors/sanitize-tool-error.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { ResponseResource, Usage } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent, ResponseStreamEventBody } from '../protocol/stream-events.ts';
import type { Provider, TurnEvent, TurnFinish, TurnRequest, TurnStream } from '../providers/provider.ts';
import { callItemsFor } from './call-items.ts';
import { AnswerGate, type AnswerVerdict } from './controls/answer-gate.ts';
import { HostedCallBudget } from './controls/hosted-call-budget.ts';
import { capCallsPerTurn, finalAnswerPrompt, withinToolCallBudget, type LoopLimit } from './controls/limit-controls.ts';
import type { LoopControls } from './controls/loop-controls.ts';
import { choiceAfterToolsRan } from './resolve-tool-choice.ts';
import { fitsTextFormat, terminalCall, type TerminalRunWhilePaused } from './controls/terminal-tools.ts';
import type { ClientToolName } from './declared-tools.ts';
import { finishResponse, type Ending } from './finish-response.ts';
import type { LoopObserver } from './loop-observer.ts';
import { ModelTranscript, userMessage } from './model-transcript.ts';
import { type Emit, OutputBuilder } from './output-builder.ts';
import { planToolCalls, type PlannedCall, type ToolPolicy } from './plan-tool-calls.ts';
import { describeFailure } from './response-lifecycle.ts';
import type { ResumePlan } from './resume-paused-turn.ts';
import { OWNER_LOST_MESSAGE, type ResponseDeadline } from './response-deadline.ts';
import { runToolRound, type ToolRoundResult, type ToolRoundScope } from './tool-round.ts';
import { UsageTotal } from './usage-total.ts';

export interface LoopLimits {
  /** Model turns per response (default 10) unless the request's controls say otherwise; then `incomplete` with reason `max_turns`, or a last call for a final answer. */
  maxTurns: number;
  /** Per-call limit for executors that set none. */
  toolTimeoutMs: number;
  /** Stop after this many failed tool calls in a row; 0 turns the limit off (the default, as seed 004 asks). */
  maxConsecutiveToolFailures: number;
  /** The status a paused response reports: `requires_action`, or `completed` for clients that need OpenAI's exact behaviour. */
  pausedStatus: 'requires_action' | 'completed';
  /** Most characters the model may write over the response (text, reasoning, call arguments); `MAX_UPSTREAM_ANSWER_CHARS` unless said. */
  maxAnswerChars?: number;
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
  /** Runs once the stream is over, however it ended: `response` as it was left, `failure` what the stream threw (null when it did not), `tally` what the loop spent. */
  ended?(response: ResponseResource, failure: { error: unknown } | null, tally: { usage: Usage | null; toolCalls: number }): void;
}

/** What the transport reads: every event (SSE, WebSocket, background event logs), or only the terminal one (a JSON answer). */
export type Delivery = 'events' | 'final';

export interface ResponseLoop {
  response: ResponseResource;
  provider: Provider;
  /** The first turn's request; its `items` are the conversation before this response's output. */
  request: TurnRequest;
  /** The first turn, already started (so an immediate upstream failure became an HTTP status); null to start it here. */
  firstTurn: TurnStream | null;
  resume: ResumePlan | null;
  /** A terminal tool's call that ran while the response this one continues waited for the client: it ends this one. */
  terminalRan: TerminalRunWhilePaused | null;
  /** Items announcing what executors offered (`mcp_list_tools`), added before the first turn. */
  announcements: readonly OutputItem[];
  registry: ExecutorRegistry;
  toolContext: ToolContext;
  /** Namespaced functions: the name the model calls → the name and namespace the client sees. */
  namespaced?: ReadonlyMap<string, ClientToolName>;
  policy: LoopPolicy;
  limits: LoopLimits;
  /** The loop controls in force for this response (operator configuration and the request's `"loopgate:loop"`). */
  controls: LoopControls;
  /** With `final`, events before the terminal one are not kept: the same loop runs, the batches nobody reads are never built. Default `events`. */
  delivery?: Delivery;
  /** Cleans tool error outputs before the model and the client see them. */
  toolErrors: ToolErrorSanitizer;
  /** Aborted when the client goes away or the deadline passes. */
  signal: AbortSignal;
  /** The response's deadline: tells the two apart, and is disposed when the stream ends. */
  deadline: ResponseDeadline;
  observer: Required<LoopObserver>;
  hooks: ResponseEventHooks;
}


const CLIENT_CALL: CallPresentation = { kind: 'function' };

/**
 * One response as one ordered event stream, across every turn of the agentic
 * loop (seed 004): a turn is one provider call plus the tool calls it made;
 * server-side calls run concurrently and their outputs go back to the model
 * until it answers, a client call pauses the response (`requires_action`), a
 * limit is reached, the request is cancelled, or something fails. The loop
 * controls (controls/) decide what an answer, a limit and a terminal tool
 * do. Written once for both transports; this function alone assigns
 * `sequence_number`.
 */
export async function* runResponseLoop(loop: ResponseLoop): AsyncGenerator<ResponseStreamEvent[]> {
  let failure: { error: unknown } | null = null;
  const tally: LoopTally = { usage: new UsageTotal(), counters: { run: 0, consecutiveFailures: 0 } };
  try {
    yield* runLoop(loop, tally);
  } catch (error) {
    failure = { error };
    throw error;
  } finally {
    loop.deadline.dispose();
    // Usage is charged whatever way the response ended, a dropped stream included.
    loop.hooks.ended?.(loop.response, failure, { usage: tally.usage.toUsage(), toolCalls: tally.counters.run });
  }
}

/** What the loop counts over the whole response: usage of every model call, server-side calls run, failures in a row. */
interface LoopTally {
  usage: UsageTotal;
  counters: ToolRoundScope['counters'];
}

/**
 * Events travel in batches — everything one step produced — because each
 * hop through an async generator costs a promise: a response is a handful of
 * batches, not dozens of single events.
 */
async function* runLoop(loop: ResponseLoop, tally: LoopTally): AsyncGenerator<ResponseStreamEvent[]> {
  let sequence = 0;
  let pending: ResponseStreamEventBody[] = [];
  const emit: Emit = loop.delivery === 'final' ? null : (event: ResponseStreamEventBody) => void pending.push(event);
  /** Numbers what is pending and hands it over. */
  const drain = (): ResponseStreamEvent[] => {
    const batch = pending as ResponseStreamEvent[];
    for (const body of batch) body.sequence_number = sequence++;
    pending = [];
    return batch;
  };
  const flush = () => (pending.length > 0 ? drain() : null);
  const stamp = (body: ResponseStreamEventBody): ResponseStreamEvent[] => {
    pending.push(body);
    return drain();
  };

  const { response, observer, controls } = loop;
  // A background response is announced `queued`; it runs from here on. (Its two snapshots are copies of the whole response: built only when kept.)
  emit?.({ type: 'response.created', response: { ...response, output: [] } });
  response.status = 'in_progress';
  emit?.({ type: 'response.in_progress', response: { ...response, output: [] } });

  // A call nobody offers (a denied or missing tool of an MCP server) shows as that server's calls do: refused, but never taken for the client's own.
  let clientTools: ReadonlySet<string> | null = null;
  const isClientTool = (name: string) => (clientTools ??= new Set(loop.toolContext.tools.map((tool) => tool.name))).has(name) && !loop.toolContext.offered.has(name);
  const itemsOf = (name: string) => callItemsFor(isClientTool(name) ? CLIENT_CALL : loop.registry.presentationOf(name, loop.toolContext));
  const builder = new OutputBuilder((name) => itemsOf(name).hidesCall, (name) => loop.namespaced?.get(name) ?? null, loop.request.reasoningSummary != null, loop.request.encryptedReasoning);
  const { usage, counters } = tally;
  const scope: ToolRoundScope = { loop, builder, emit, itemsOf, flush, counters };
  const transcript = new ModelTranscript(loop.request.items, loop.resume?.joining);
  const gate = new AnswerGate(controls);
  let endedBy: LoopReport['ended_by'];
  let ending: Ending | null = null;
  /** Set once a limit asked for a final answer: the next model call is the last, and may not use tools. */
  let lastCall: LoopLimit | null = null;
  /** Model calls that are not turns: answers a completion check or a failed validation sent back. */
  let retries = 0;
  /** Characters the model wrote over the whole response (text, refusals, reasoning, call arguments). */
  let answerChars = 0;
  const maxAnswerChars = loop.limits.maxAnswerChars ?? MAX_UPSTREAM_ANSWER_CHARS;

  // A client's own tool loop continues with its tools' outputs: that response has used tools too.
  const continuesTools = sendsToolOutputs(loop.request);
  const usedTools = () => continuesTools || counters.run > 0;
  const hosted = new HostedCallBudget(loop.policy.maxToolCalls);
  const nextRequest = (): TurnRequest => {
    if (!lastCall) {
      const next: TurnRequest = { ...loop.request, items: transcript.next(builder.output) };
      if (counters.run > 0 || hosted.made > 0) {
        next.toolChoice = choiceAfterToolsRan(loop.request.toolChoice);
        next.hostedToolChoice = null;
      }
      return hosted.bound(next, counters.run);
    }
    return { ...loop.request, items: transcript.next(builder.output, [userMessage(finalAnswerPrompt(lastCall))]), toolChoice: 'none', hostedToolChoice: null };
  };
  /**
   * Ends the loop when a terminal tool of the round succeeded. Its output is
   * the answer, as an assistant message too: agent frameworks take a
   * response with no message for one to go on from (the Agents SDK calls the
   * model again), as its `stop_on_first_tool` makes the tool's output the
   * final output.
   */
  const endIfTerminal = async (planned: readonly PlannedCall[], round: ToolRoundResult): Promise<Ending | null> => {
    const call = terminalCall(planned, round.failed, controls.terminalTools);
    if (!call) return null;
    const answer = round.outputs.get(call.callId);
    if (answer !== undefined && !(await fitsTextFormat(answer, loop.request.textFormat, { toolContext: loop.toolContext, signal: loop.signal }))) return null;
    // Named as the client sees the call: its call_id, or its mcp_call's id.
    return endWithTerminal(call.name, round.shownAs(call.callId), answer);
  };
  const endWithTerminal = (name: string, callId: string, answer: string | undefined): Ending => {
    endedBy = { type: 'terminal_tool', name, call_id: callId };
    if (answer) {
      builder.apply({ type: 'text.delta', delta: answer }, emit);
      builder.closeAll('finished', emit);
    }
    return { status: 'completed' };
  };

  try {
    for (const item of loop.announcements) builder.addItem(item, emit);
    const announced = flush();
    if (announced) yield announced;
    if (loop.resume) {
      const round = yield* runToolRound(scope, loop.resume.calls, loop.resume.closed, 0);
      ending = round.stop ?? (await endIfTerminal(loop.resume.calls, round));
    }
    if (ending === null && loop.terminalRan) ending = endWithTerminal(loop.terminalRan.call.name, loop.terminalRan.shownAs, loop.terminalRan.output);
    for (let turn = 1; ending === null && !loop.signal.aborted; turn++) {
      if (lastCall === null && turn - retries > controls.maxTurns) {
        if (controls.atLimit !== 'final_answer') {
          ending = { status: 'incomplete', reason: 'max_turns' };
          break;
        }
        lastCall = 'max_turns';
      }
      const started = performance.now();
      observer.turnStarted({ turn });
      builder.startTurn();
      const mark = builder.output.length;
      // A turn whose answer may be sent back is held until it is judged: clients only see answers that stand.
      const held = gate.holdsNextTurn(usedTools(), lastCall !== null);
      const heldFrom = pending.length;
      let stream: TurnStream;
      try {
        stream = turn === 1 && loop.firstTurn ? loop.firstTurn : await startModelCall(loop, nextRequest(), turn);
      } catch (error) {
        // A model call refused at once ends its turn too: watchers (the inspector, traces) must not show it running.
        observer.turnEnded({ turn, toolCalls: 0, finish: null, durationMs: performance.now() - started });
        // One that failed after the upstream answered (a summary cut short) was billed all the same.
        if (error instanceof GatewayError && error.billed) usage.add(error.billed);
        throw error;
      }
      const read: { finish: TurnFinish | null; failure: { code: string; message: string } | null; output: boolean } = { finish: null, failure: null, output: false };
      /** Takes one event of the turn; true when it ended the turn. */
      const take = (event: TurnEvent): boolean => {
        if (event.type === 'finish') read.finish = event.finish;
        else if (event.type === 'usage') usage.add(event.usage);
        // Which answer and model the upstream gave: for traces (observed-provider.ts), no output.
        else if (event.type === 'upstream.response') return false;
        // The tier the upstream served at is what the response reports, as OpenAI's does (it may differ from the one asked for).
        else if (event.type === 'service_tier') {
          response.service_tier = event.tier;
          return false;
        }
        else if (event.type === 'error') {
          read.failure = { code: event.code, message: event.message };
          if (!loop.signal.aborted) observer.modelCallFailed({ turn, provider: loop.provider.name, code: event.code, status: null });
          return true;
        } else {
          if (!read.output) {
            read.output = true;
            observer.modelCallFirstOutput({ turn });
          }
          // An answer past the bound (an upstream streaming without end) is cut off, not held until the process runs out of memory.
          if ('delta' in event && (answerChars += event.delta.length) > maxAnswerChars) {
            read.failure = { code: 'upstream_invalid_response', message: `The upstream '${loop.provider.name}' sent an answer larger than ${describeChars(maxAnswerChars)}; it was cut off there.` };
            observer.modelCallFailed({ turn, provider: loop.provider.name, code: read.failure.code, status: null });
            return true;
          }
          if (event.type === 'hosted_item.done') hosted.made++;
          builder.apply(event, emit);
        }
        return false;
      };
      // A turn read whole (a non-streamed answer) is walked without an await per event.
      if (isAsync(stream)) {
        for await (const event of stream) {
          if (take(event)) break;
          if (!held && pending.length > 0) yield drain();
        }
      } else {
        for (const event of stream) if (take(event)) break;
        if (!held && pending.length > 0) yield drain();
      }
      const { finish, failure } = read;
      // A finish no known reason names, with calls made (a server's `abort`, a Responses upstream's unknown incomplete reason, Gemini's
      // UNEXPECTED_TOOL_CALL), ended the turn mid-call: its calls are not the model's finished ones, and nothing runs them.
      const unknownMidCall = finish?.reason === 'other' && builder.turnMadeCalls;
      builder.closeAll(failure !== null || finish === null || unknownMidCall ? 'broken' : finish.reason === 'length' || finish.reason === 'content_filter' ? 'cut_short' : 'finished', emit);
      const calls = builder.turnCalls();
      observer.turnEnded({ turn, toolCalls: calls.length, finish: finish?.raw ?? finish?.reason ?? null, durationMs: performance.now() - started });

      // Whatever stays held is sent with the terminal event.
      if (failure) ending = { status: 'failed', ...failure };
      else if (!finish) ending = { status: 'failed', code: 'upstream_stream_truncated', message: 'The model call ended without a finish reason.' };
      else if (finish.reason === 'length') ending = { status: 'incomplete', reason: 'max_output_tokens' };
      else if (finish.reason === 'content_filter') ending = { status: 'incomplete', reason: 'content_filter' };
      else if (unknownMidCall) ending = { status: 'failed', code: 'upstream_error', message: `The model's turn ended in the middle of its tool calls (finish reason ${JSON.stringify(finish.raw ?? 'unknown')}); they were not run.` };
      // A finish the gateway does not know (Gemini's MALFORMED_FUNCTION_CALL, say) that left nothing but reasoning is no answer to complete with.
      else if (finish.reason === 'other' && calls.length === 0 && builder.output.slice(mark).every((item) => item.type === 'reasoning')) {
        ending = { status: 'failed', code: 'upstream_no_answer', message: `The model stopped without an answer (finish reason ${JSON.stringify(finish.raw ?? 'unknown')}).` };
      }
      if (ending?.status === 'incomplete') gate.cutShort(ending.reason);
      if (ending) break;

      // A refusal is the model's answer, not a malformed one: asked again it refuses again, each time billed (OpenAI's own contract: a `refusal` part, completed).
      if (calls.length === 0 && answerRefused(builder.output, mark)) {
        ending = { status: 'completed' };
        break;
      }
      if (calls.length === 0) {
        let verdict: AnswerVerdict;
        try {
          verdict = gate.verdictBeforeReading(usedTools(), lastCall !== null) ?? (await gate.validate({ text: answerText(builder.output, mark), toolContext: loop.toolContext, signal: loop.signal }, lastCall !== null));
        } catch (error) {
          // A validator that could not answer fails the response: the answer it never judged is not sent, nor kept.
          if (held) {
            pending.length = heldFrom;
            builder.output.splice(mark);
          }
          throw error;
        }
        if (verdict.kind === 'retry') {
          pending.length = heldFrom;
          transcript.hide(builder.output.splice(mark), verdict.feedback);
          retries++;
          continue;
        }
        if (verdict.kind === 'reject') ending = { status: 'incomplete', reason: 'output_validation_failed' };
        else {
          if (lastCall) endedBy = { type: 'final_answer_at_limit', limit: lastCall };
          ending = { status: 'completed' };
        }
        break;
      }
      gate.sawToolCalls();
      const released = flush();
      if (released) yield released;
      // Calls that will not run: a function call's item is already out, but an MCP call's item comes with its result, so it gets one saying why.
      const hidden = calls.filter((call) => itemsOf(call.name).hidesCall);
      const showNotRun = (why: string) => runToolRound(scope, hidden.map((call): PlannedCall => ({ call, route: 'rejected', error: `This call was not run: ${why}.` })), [], turn);
      if (lastCall) {
        // Asked for an answer without tools, it called some anyway: they are not run.
        if (hidden.length > 0) yield* showNotRun(`the response reached its ${lastCall} limit and asked for an answer without tools`);
        ending = { status: 'incomplete', reason: lastCall };
        break;
      }
      // A tenant's policy that leaves nothing to offer still has its refusal said (and the model goes on): the tools exist, the tenant may not use them.
      // (Not when a call is outside `allowed_tools`, which is enforced whoever runs the tools: planned below, it is refused with an error output.)
      const allowed = loop.policy.allowed;
      const allAllowed = allowed === null || calls.every((call) => allowed.has(call.name));
      if (loop.policy.toolChoiceNone || (allAllowed && !loop.registry.serverSideAvailable(loop.toolContext) && !calls.some((call) => loop.registry.refusal(call, loop.toolContext) !== null))) {
        if (hidden.length > 0) yield* showNotRun(loop.policy.toolChoiceNone ? 'tool_choice is "none"' : 'no tool server is available to run it');
        ending = { status: 'completed' };
        break;
      }

      let planned = capCallsPerTurn(planToolCalls(calls, loop.registry, loop.toolContext, loop.policy), controls.maxToolCallsPerTurn);
      // A call waiting for approval is one the gateway will run: it counts as one of the response's tool calls.
      const serverCalls = planned.filter((entry) => entry.route === 'server' || entry.route === 'approval').length;
      if (loop.policy.maxToolCalls !== null && counters.run + hosted.made + serverCalls > loop.policy.maxToolCalls) {
        // The calls within the limit run (or wait for their approval); the rest end with the turn, each answered saying why (an MCP call shown, a function call not left dangling for a continuation).
        const capped = withinToolCallBudget(planned, Math.max(0, loop.policy.maxToolCalls - counters.run - hosted.made), 'max_tool_calls');
        if (controls.atLimit !== 'final_answer' && !capped.some((entry) => entry.route === 'approval')) {
          const round = yield* runToolRound(scope, capped, [], turn);
          // A terminal call among those that ran ends the response as it would below the limit.
          ending = round.stop ?? (await endIfTerminal(capped, round)) ?? { status: 'incomplete', reason: 'max_tool_calls' };
          break;
        }
        if (controls.atLimit === 'final_answer') lastCall = 'max_tool_calls';
        planned = capped;
      }
      const waitsForClient = planned.some((entry) => entry.route === 'client');
      const approvals = planned.filter((entry) => entry.route === 'approval');
      if (waitsForClient || approvals.length > 0) {
        // A client call pauses the turn: server calls shown as their own items (MCP's, which hide the model's call) run first,
        // since nothing of theirs would be left for the continuation to find; those shown as function calls wait for it (seed 004).
        // Calls that only wait for approval let every other call run first. Either way, calls that can never run get their
        // error output now: what is left unanswered is the client's.
        const runNow = planned.filter((entry) => (waitsForClient ? entry.route === 'rejected' || (entry.route === 'server' && itemsOf(entry.call.name).hidesCall) : entry.route !== 'approval'));
        const round = yield* runToolRound(scope, runNow, [], turn);
        if (round.stop) {
          ending = round.stop;
          break;
        }
        for (const { call } of approvals) {
          const request = itemsOf(call.name).approvalRequest(call);
          if (!request) continue;
          builder.addItem(request, emit);
          observer.approvalRequested({ turn, callId: call.callId, name: call.name });
        }
        const asked = flush();
        if (asked) yield asked;
        ending = { status: 'requires_action' };
        break;
      }
      const round = yield* runToolRound(scope, planned, [], turn);
      ending = round.stop ?? (await endIfTerminal(planned, round));
    }
  } catch (error) {
    if (!loop.signal.aborted) {
      // The error's own type, as the client of a JSON request refused at once gets it (a 429's `rate_limit_error`), not one read from its code.
      ending = error instanceof GatewayError ? { status: 'failed', code: error.code ?? 'upstream_error', message: error.message, type: error.type } : { status: 'failed', code: 'server_error', message: 'The response failed.' };
    }
  }

  if (loop.signal.aborted) {
    const cause = loop.deadline.cause ?? 'cancelled';
    if (cause === 'cancelled') ending = { status: 'cancelled' };
    // As the reaper that claimed it ends it, whichever writes first.
    else if (cause === 'owner_lost') ending = { status: 'failed', code: 'response_owner_lost', message: OWNER_LOST_MESSAGE };
    else ending = { status: 'incomplete', reason: cause };
  }
  const final = ending ?? { status: 'failed', code: 'server_error', message: 'The response ended unexpectedly.' };
  // Anything still open here is a turn's that broke off: an error thrown mid-turn, or the response stopped.
  builder.closeAll(final.status === 'completed' || final.status === 'requires_action' ? 'finished' : 'broken', emit);
  const report = gate.report(endedBy);
  if (report) response['loopgate:loop'] = report;
  yield await finishResponse({ response, pausedStatus: loop.limits.pausedStatus, hooks: loop.hooks, clientGone: loop.deadline.cause === 'cancelled', toolsRan: counters.run > 0 || hosted.made > 0 }, builder, usage, final, stamp);
}

/** A model call after the first; one the upstream refuses is told to the observers, then ends the response as any failure does. */
async function startModelCall(loop: ResponseLoop, request: TurnRequest, turn: number): Promise<TurnStream> {
  try {
    return await loop.provider.startTurn(request, loop.signal);
  } catch (error) {
    if (!loop.signal.aborted) loop.observer.modelCallFailed({ turn, provider: loop.provider.name, ...describeFailure(error) });
    throw error;
  }
}

/** `64 Mi characters`, or the count itself below a mebi. */
function describeChars(chars: number): string {
  return chars >= 1024 * 1024 ? `${chars / (1024 * 1024)} Mi characters` : `${chars} characters`;
}

function isAsync(stream: TurnStream): stream is AsyncIterable<TurnEvent> {
  return Symbol.asyncIterator in stream;
}

/** The text of a turn's answer: every `output_text` of its messages. */
function answerText(output: readonly OutputItem[], from: number): string {
  let text = '';
  for (const item of output.slice(from)) {
    if (item.type !== 'message') continue;
    for (const part of item.content) if (part.type === 'output_text') text += part.text;
  }
  return text;
}

/** Whether the turn's answer is a refusal (a message with a `refusal` part). */
function answerRefused(output: readonly OutputItem[], from: number): boolean {
  for (let index = from; index < output.length; index++) {
    const item = output[index]!;
    if (item.type === 'message' && item.content.some((part) => part.type === 'refusal')) return true;
  }
  return false;
}

/** Whether the request's own input (after the inherited history) carries outputs of the client's tools. */
function sendsToolOutputs(request: TurnRequest): boolean {
  const { items } = request;
  for (let index = request.historyLength; index < items.length; index++) {
    const type = items[index]!.type;
    if (type === 'function_call_output' || type === 'custom_tool_call_output') return true;
  }
  return false;
}
