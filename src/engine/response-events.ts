import type { ItemStatus } from '../protocol/output-items.ts';
import type { ResponseResource, Usage } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent, ResponseStreamEventBody, TerminalEventType } from '../protocol/stream-events.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { TurnFinish, TurnStream, TurnUsage } from '../providers/provider.ts';
import { OutputBuilder } from './output-builder.ts';

export interface ResponseEventHooks {
  /**
   * Runs once the response is final, before its terminal event is sent — so
   * a client never sees `completed` for a response it cannot fetch.
   */
  beforeTerminal(response: ResponseResource): Promise<void>;
  /**
   * What a `beforeTerminal` failure does: end the stream with
   * `response.failed` (a stream whose 200 is already out), or propagate (a
   * JSON request, which can still answer with an HTTP error).
   */
  onHookFailure: 'fail-response' | 'throw';
}

/**
 * The single ordered event stream of one response: `response.created`,
 * `response.in_progress`, the items, exactly one terminal event. This function
 * alone assigns `sequence_number`, so numbering cannot diverge between the
 * streaming and the non-streaming path (which folds these same events).
 */
export async function* streamResponseEvents(response: ResponseResource, turn: TurnStream, signal: AbortSignal, hooks: ResponseEventHooks): AsyncGenerator<ResponseStreamEvent> {
  let sequence = 0;
  const stamp = (body: ResponseStreamEventBody): ResponseStreamEvent => Object.assign(body, { sequence_number: sequence++ });
  const pending: ResponseStreamEventBody[] = [];
  const emit = (event: ResponseStreamEventBody) => pending.push(event);

  yield stamp({ type: 'response.created', response: { ...response, output: [] } });
  yield stamp({ type: 'response.in_progress', response: { ...response, output: [] } });

  const builder = new OutputBuilder();
  let finish: TurnFinish | null = null;
  let failure: { code: string; message: string } | null = null;
  let usage: TurnUsage | null = null;
  try {
    for await (const event of turn) {
      if (event.type === 'finish') finish = event.finish;
      else if (event.type === 'usage') usage = event.usage;
      else if (event.type === 'error') {
        failure = { code: event.code, message: event.message };
        break;
      } else {
        builder.apply(event, emit);
        for (const body of pending) yield stamp(body);
        pending.length = 0;
      }
    }
  } catch (error) {
    // A client that went away has nobody left to tell.
    if (signal.aborted) return;
    failure = { code: 'upstream_error', message: error instanceof Error ? error.message : 'The upstream stream failed.' };
  }
  if (signal.aborted) return;

  if (!finish && !failure) failure = { code: 'upstream_stream_truncated', message: 'The model call ended without a finish reason.' };
  const outcome = settle(finish, failure);
  builder.closeAll(outcome.itemStatus, emit);
  for (const body of pending) yield stamp(body);

  response.output = builder.output;
  response.status = outcome.status;
  response.incomplete_details = outcome.incompleteReason ? { reason: outcome.incompleteReason } : null;
  response.error = failure;
  response.usage = usage ? toUsage(usage) : null;
  if (outcome.status === 'completed') response.completed_at = Math.floor(Date.now() / 1000);
  let terminal = outcome.terminal;
  try {
    await hooks.beforeTerminal(response);
  } catch (error) {
    if (hooks.onHookFailure === 'throw') throw error;
    terminal = 'response.failed';
    response.status = 'failed';
    response.completed_at = null;
    response.incomplete_details = null;
    response.error = error instanceof GatewayError ? { code: error.code ?? 'server_error', message: error.message } : { code: 'server_error', message: 'The response could not be finished.' };
  }
  yield stamp({ type: terminal, response });
}

interface Outcome {
  status: ResponseResource['status'];
  terminal: TerminalEventType;
  incompleteReason: string | null;
  itemStatus: ItemStatus;
}

function settle(finish: TurnFinish | null, failure: { code: string; message: string } | null): Outcome {
  if (failure || !finish) return { status: 'failed', terminal: 'response.failed', incompleteReason: null, itemStatus: 'incomplete' };
  switch (finish.reason) {
    case 'length':
      return { status: 'incomplete', terminal: 'response.incomplete', incompleteReason: 'max_output_tokens', itemStatus: 'incomplete' };
    case 'content_filter':
      return { status: 'incomplete', terminal: 'response.incomplete', incompleteReason: 'content_filter', itemStatus: 'incomplete' };
    default:
      return { status: 'completed', terminal: 'response.completed', incompleteReason: null, itemStatus: 'completed' };
  }
}

function toUsage(usage: TurnUsage): Usage {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}
