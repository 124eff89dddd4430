import type { TurnEvent } from '../provider.ts';
import { errorEventFrom, errorFromUpstreamFrame } from '../upstream-errors.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { reportTier, ResponsesEventTranslator } from './responses-event-translator.ts';
import type { ResponsesBody } from './responses-wire.ts';

/**
 * Translates a non-streamed Responses API answer. Its output items go through
 * the same translator as a stream's finished items and yield the same events.
 */
export function readResponsesBody(body: unknown, provider: string, onLeftOut: ((types: string[]) => void) | null = null): TurnEvent[] {
  if (body === null || typeof body !== 'object') throw invalidUpstreamBody(provider, 'the body is not a JSON object');
  const response = body as ResponsesBody;
  if (response.status === 'failed' || (response.error && !response.output)) {
    const error = errorEventFrom(response.error ?? {});
    throw errorFromUpstreamFrame(provider, error.code, error.message, error.status, error.param);
  }
  if (!Array.isArray(response.output)) throw invalidUpstreamBody(provider, 'the response has no output');
  const translator = new ResponsesEventTranslator(onLeftOut);
  const events: TurnEvent[] = [];
  translator.identify(response, events);
  for (const item of response.output) {
    if (item !== null && typeof item === 'object') translator.acceptItem(item, events);
  }
  // Where a stream says it: with the final response, after the output.
  reportTier(response, events);
  translator.setFinal(response);
  translator.finish(events);
  return events;
}
