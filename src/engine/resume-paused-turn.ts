import { invalidRequest } from '../errors/gateway-error.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { ToolCall, ToolContext } from '../executors/tool-executor.ts';
import type { ConversationTurn, StoredInputItem } from '../store/response-store.ts';
import { planToolCalls, type PlannedCall, type ToolPolicy } from './plan-tool-calls.ts';

/** What the gateway owes a paused turn before the model can be called again. */
export interface ResumePlan {
  /** Calls of the paused turn the gateway runs (or rejects) now, so every call has an output. */
  calls: PlannedCall[];
  /** Calls closed without running, because the client continued without answering any of them. */
  closed: ToolCall[];
}

/** The output given to calls the conversation moved on from. */
export const NOT_RUN_MESSAGE = 'This call was not run: the conversation continued without its result.';

/**
 * Continuing a `requires_action` response: the client answers its own calls
 * with `function_call_output` items; the gateway runs the paused turn's
 * server-side calls. Answering only some of the client calls is a 400 naming
 * one that is missing; answering none moves on (seed 004's last edge case),
 * and the unanswered calls are closed so that every upstream accepts the
 * history.
 */
export function planResume(previous: ConversationTurn | null, input: readonly StoredInputItem[], registry: ExecutorRegistry, context: ToolContext, policy: ToolPolicy): ResumePlan | null {
  if (!previous || previous.status !== 'requires_action') return null;
  const answeredInPrevious = new Set(previous.output.flatMap((item) => (item.type === 'function_call_output' ? [item.call_id] : [])));
  const paused: ToolCall[] = previous.output.flatMap((item) =>
    item.type === 'function_call' && !answeredInPrevious.has(item.call_id) ? [{ callId: item.call_id, name: item.name, arguments: item.arguments }] : [],
  );
  if (paused.length === 0) return null;
  const answered = new Set(input.flatMap((item) => (item.type === 'function_call_output' ? [item.call_id] : [])));
  const unanswered = paused.filter((call) => !answered.has(call.callId));
  if (unanswered.length === paused.length) return { calls: [], closed: paused };

  const planned = planToolCalls(unanswered, registry, context, policy);
  const missingClientCall = planned.find((entry) => entry.route === 'client');
  if (missingClientCall) {
    throw invalidRequest(
      `No function_call_output was given for call_id '${missingClientCall.call.callId}' (${missingClientCall.call.name}) of the paused response; answer every client call of that turn.`,
      'input',
      'missing_function_call_output',
    );
  }
  return { calls: planned, closed: [] };
}
