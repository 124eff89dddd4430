import type { CallPresentation, ToolCall, ToolExecutor, ToolResult } from '../executors/tool-executor.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';
import { callItemsFor, type CallItems, type OpenedResult } from './call-items.ts';
import type { Ending } from './finish-response.ts';
import type { Emit, OutputBuilder } from './output-builder.ts';
import { errorOutput, type PlannedCall } from './plan-tool-calls.ts';
import { NOT_RUN_MESSAGE } from './resume-paused-turn.ts';
import type { ResponseLoop } from './response-loop.ts';
import { runToolCalls } from './run-tool-calls.ts';

/** What one response's tool rounds share with its loop. */
export interface ToolRoundScope {
  loop: ResponseLoop;
  builder: OutputBuilder;
  emit: Emit;
  /** Which items show a tool's calls (call-items.ts). */
  itemsOf(name: string): CallItems;
  /** Numbers and hands over the pending events; null when there are none. */
  flush(): ResponseStreamEvent[] | null;
  /** Over the whole response: server-side calls run, and failures in a row. */
  counters: { run: number; consecutiveFailures: number };
}

export interface ToolRoundResult {
  /** Calls whose output is an error (rejected, failed, timed out, not run). */
  failed: ReadonlySet<string>;
  /** Each call's output text, by call id. */
  outputs: ReadonlyMap<string, string>;
  /** The id a call is shown under (see `OpenedResult.shownAs`). */
  shownAs(callId: string): string;
  /** Set when too many calls in a row failed (`loop.maxConsecutiveToolFailures`): the loop ends with it. */
  stop: Ending | null;
}

/**
 * Runs one turn's planned calls: every result item is added first (in call
 * order), rejected and closed calls get their error output at once, then the
 * server-side calls run concurrently and each output is streamed as its
 * result arrives.
 */
export async function* runToolRound(scope: ToolRoundScope, planned: readonly PlannedCall[], closed: readonly ToolCall[], turn: number): AsyncGenerator<ResponseStreamEvent[], ToolRoundResult> {
  const { loop, builder, emit, counters } = scope;
  const failed = new Set<string>();
  const outputs = new Map<string, string>();
  const handles = new Map<string, OpenedResult>();
  const shownAs = (callId: string) => handles.get(callId)?.shownAs ?? callId;
  const open = (call: ToolCall, approvalRequestId?: string, presentation?: CallPresentation) =>
    (presentation ? callItemsFor(presentation) : scope.itemsOf(call.name)).openResult(builder, call, emit, approvalRequestId);
  for (const entry of planned) handles.set(entry.call.callId, open(entry.call, 'approvalRequestId' in entry ? entry.approvalRequestId : undefined, 'presentation' in entry ? entry.presentation : undefined));
  for (const call of closed) handles.set(call.callId, open(call));
  const finish = (call: ToolCall, result: ToolResult): void => {
    handles.get(call.callId)!.finish(result);
    outputs.set(call.callId, result.output);
    if (result.isError) failed.add(call.callId);
    counters.consecutiveFailures = result.isError ? counters.consecutiveFailures + 1 : 0;
  };
  const refuse = (call: ToolCall, error: string, isError: boolean) => {
    finish(call, { output: errorOutput(error), isError });
    loop.observer.toolCallRefused({ turn, callId: call.callId, name: call.name, error });
  };
  for (const entry of planned) if (entry.route === 'rejected') refuse(entry.call, entry.error, true);
  for (const call of closed) refuse(call, NOT_RUN_MESSAGE, false);
  const first = scope.flush();
  if (first) yield first;

  const server = planned.filter((entry): entry is { call: ToolCall; route: 'server'; executor: ToolExecutor } => entry.route === 'server');
  counters.run += server.length;
  const arrived: { index: number; result: ToolResult }[] = [];
  let wake: (() => void) | null = null;
  const all = runToolCalls(server.map((entry) => ({ call: entry.call, executor: entry.executor, itemId: shownAs(entry.call.callId) })), {
    context: loop.toolContext,
    parallel: loop.policy.parallel,
    defaultTimeoutMs: loop.limits.toolTimeoutMs,
    signal: loop.signal,
    observer: loop.observer,
    errors: loop.toolErrors,
    turn,
    onResult: (index, result) => {
      arrived.push({ index, result });
      wake?.();
    },
  });
  for (let finished = 0; finished < server.length; ) {
    if (arrived.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    for (const { index, result } of arrived.splice(0)) {
      finish(server[index]!.call, result);
      finished++;
    }
    const batch = scope.flush();
    if (batch) yield batch;
  }
  await all;
  const limit = loop.limits.maxConsecutiveToolFailures;
  if (limit > 0 && counters.consecutiveFailures >= limit) {
    return { failed, outputs, shownAs, stop: { status: 'failed', code: 'tool_failure_limit', message: `${counters.consecutiveFailures} tool calls in a row failed; the limit is ${limit}.` } };
  }
  return { failed, outputs, shownAs, stop: null };
}
