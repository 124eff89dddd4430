import { startFrameStream } from '../first-frame.ts';
import type { TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromUpstreamFrame } from '../upstream-errors.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { ResponsesEventTranslator } from './responses-event-translator.ts';
import type { ResponsesStreamEvent } from './responses-wire.ts';

/**
 * Starts reading a streamed Responses API answer. The lifecycle events that
 * open it (`response.created`, `in_progress`) say nothing yet, so frames are
 * read until the first one with content before this resolves (an `error` or
 * `response.failed` there rejects; see `startFrameStream`). The terminal
 * `response.*` event carries usage, so reading stops once the model finished.
 */
export function startResponsesStream(frames: AsyncGenerator<SseFrame[]>, provider: string, signal: AbortSignal, onLeftOut: ((types: string[]) => void) | null = null): Promise<TurnStream> {
  return startFrameStream(
    frames,
    {
      provider,
      translator: new ResponsesEventTranslator(onLeftOut),
      parse: parseEvent,
      isEndMarker: (data) => data === '[DONE]',
      peek: 'until content',
      stopWhenFinished: true,
      unparsable: 'not a JSON event',
      invalidFirstFrame: () => invalidUpstreamBody(provider, 'a stream frame is not a JSON event'),
      errorFromFrame: (failure) => errorFromUpstreamFrame(provider, failure.code, failure.message, failure.status, failure.param),
    },
    signal,
  );
}

function parseEvent(data: string): ResponsesStreamEvent | null {
  try {
    const value: unknown = JSON.parse(data);
    if (value === null || typeof value !== 'object') return null;
    if (typeof (value as { type?: unknown }).type === 'string') return value as ResponsesStreamEvent;
    // An error as Chat Completions servers send one, `{"error": {...}}` without a type (vLLM's and OpenRouter's Responses streams).
    const { error } = value as { error?: unknown };
    return error !== null && typeof error === 'object' ? ({ type: 'error', error } as ResponsesStreamEvent) : null;
  } catch {
    return null;
  }
}
