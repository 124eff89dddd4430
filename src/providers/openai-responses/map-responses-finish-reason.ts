import type { TurnFinish } from '../provider.ts';
import type { ResponsesBody } from './responses-wire.ts';

/**
 * A Responses API answer says why it stopped by its status and, when
 * incomplete, `incomplete_details.reason`; a finished answer with function
 * calls is a tool-call stop. The raw value kept is the status or the reason.
 */
export function mapResponsesFinishReason(response: ResponsesBody, hasToolCalls: boolean): TurnFinish {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason ?? null;
    if (reason === 'max_output_tokens') return { reason: 'length', raw: reason };
    if (reason === 'content_filter') return { reason: 'content_filter', raw: reason };
    return { reason: 'other', raw: reason ?? 'incomplete' };
  }
  if (response.status === 'completed') return { reason: hasToolCalls ? 'tool_calls' : 'stop', raw: 'completed' };
  return { reason: 'other', raw: response.status ?? null };
}
