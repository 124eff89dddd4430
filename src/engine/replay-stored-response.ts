import { isUnfinishedCall } from './client-call-kinds.ts';
import { isHostedCallItemType } from '../protocol/hosted-tools.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent, ResponseStreamEventBody } from '../protocol/stream-events.ts';

/**
 * A finished response told again as the event stream a client would have
 * read: lifecycle events, each item added, its text parts or arguments as
 * one delta each, done, then the terminal event — for a retried streaming
 * request whose events were not kept (an `Idempotency-Key` replay of a
 * response that was not background). Same ordering rules as a live stream.
 */
export function replayStoredResponse(response: ResponseResource): ResponseStreamEvent[] {
  const start = { ...response, status: 'in_progress' as const, output: [], usage: null, completed_at: null, error: null, incomplete_details: null };
  const bodies: ResponseStreamEventBody[] = [{ type: 'response.created', response: start }, { type: 'response.in_progress', response: start }];
  response.output.forEach((item, index) => {
    const events = itemEvents(item, index);
    bodies.push(...(brokeOff(item, response) ? events.filter((event) => !DONE_EVENTS.has(event.type)) : events));
  });
  const terminal = response.status === 'failed' ? 'response.failed' : response.status === 'completed' || response.status === 'requires_action' ? 'response.completed' : 'response.incomplete';
  bodies.push({ type: terminal, response });
  return bodies.map((body, sequence) => ({ ...body, sequence_number: sequence }) as ResponseStreamEvent);
}

const DONE_EVENTS: ReadonlySet<string> = new Set(['response.output_text.done', 'response.refusal.done', 'response.content_part.done', 'response.function_call_arguments.done', 'response.output_item.done']);

/**
 * What the model was writing when its turn broke off (it failed or was
 * stopped: a client's call, a message, a hosted call left `incomplete`) was
 * announced live and never done (output-builder.ts closeAll): so in the
 * replay too, or a client would run the call or keep the text as the model's
 * own. What the model's own limit cut was done.
 */
function brokeOff(item: OutputItem, response: ResponseResource): boolean {
  if (!isUnfinishedCall(item) && !((item.type === 'message' || isHostedCallItemType(item.type)) && (item as { status?: string }).status === 'incomplete')) return false;
  const reason = response.incomplete_details?.reason;
  return !(response.status === 'incomplete' && (reason === 'max_output_tokens' || reason === 'content_filter'));
}

function itemEvents(item: OutputItem, outputIndex: number): ResponseStreamEventBody[] {
  const scope = { item_id: item.id, output_index: outputIndex };
  if (item.type === 'message') {
    const events: ResponseStreamEventBody[] = [{ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } }];
    item.content.forEach((part, contentIndex) => {
      const at = { ...scope, content_index: contentIndex };
      if (part.type === 'refusal') {
        events.push(
          { type: 'response.content_part.added', ...at, part: { ...part, refusal: '' } },
          { type: 'response.refusal.delta', ...at, delta: part.refusal },
          { type: 'response.refusal.done', ...at, refusal: part.refusal },
        );
      } else {
        events.push(
          { type: 'response.content_part.added', ...at, part: { ...part, text: '', annotations: [], ...('logprobs' in part && { logprobs: [] }) } },
          { type: 'response.output_text.delta', ...at, delta: part.text, logprobs: [] },
          ...part.annotations.map((annotation, annotationIndex): ResponseStreamEventBody => ({ type: 'response.output_text.annotation.added', ...at, annotation_index: annotationIndex, annotation })),
          { type: 'response.output_text.done', ...at, text: part.text, logprobs: [] },
        );
      }
      events.push({ type: 'response.content_part.done', ...at, part });
    });
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
    return events;
  }
  if (item.type === 'function_call') {
    return [
      { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', ...scope, delta: item.arguments },
      { type: 'response.function_call_arguments.done', ...scope, arguments: item.arguments },
      { type: 'response.output_item.done', output_index: outputIndex, item },
    ];
  }
  // Every other kind travels whole, in added and done, as it does live.
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ];
}
