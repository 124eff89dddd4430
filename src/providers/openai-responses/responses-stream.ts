import { GatewayError } from '../../errors/gateway-error.ts';
import type { TurnEvent, TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromTransport, errorFromUpstreamFrame } from '../upstream-errors.ts';
import { invalidResponsesBody } from './responses-errors.ts';
import { ResponsesEventTranslator } from './responses-event-translator.ts';
import type { ResponsesStreamEvent } from './responses-wire.ts';

/**
 * Starts reading a streamed Responses API answer. The lifecycle events that
 * open it (`response.created`, `in_progress`) say nothing yet, so frames are
 * read until the first one with content before this resolves: an upstream
 * that fails at once (`error`, `response.failed`, a dropped connection)
 * rejects with a `GatewayError` and the client still gets a real HTTP status.
 */
export async function startResponsesStream(frames: AsyncGenerator<SseFrame>, provider: string, signal: AbortSignal): Promise<TurnStream> {
  const translator = new ResponsesEventTranslator();
  const first: TurnEvent[] = [];
  let ended = false;
  try {
    while (!first.some((event) => event.type !== 'upstream.response') && !translator.finished) {
      const frame = await frames.next();
      if (frame.done || frame.value.data === '[DONE]') {
        ended = true;
        break;
      }
      const event = parseEvent(frame.value.data);
      if (!event) throw invalidResponsesBody(provider, 'a stream frame is not a JSON event');
      translator.accept(event, first);
    }
  } catch (error) {
    await frames.return(undefined);
    if (signal.aborted || error instanceof GatewayError) throw error;
    throw errorFromTransport(provider, error);
  }
  const failure = first.find((event) => event.type === 'error');
  if (failure) {
    await frames.return(undefined);
    throw errorFromUpstreamFrame(provider, failure.code, failure.message);
  }
  return continueResponsesStream(frames, translator, first, ended, provider, signal);
}

async function* continueResponsesStream(
  frames: AsyncGenerator<SseFrame>,
  translator: ResponsesEventTranslator,
  first: TurnEvent[],
  ended: boolean,
  provider: string,
  signal: AbortSignal,
): AsyncGenerator<TurnEvent> {
  yield* first;
  const batch: TurnEvent[] = [];
  try {
    while (!ended && !translator.finished) {
      const frame = await frames.next();
      if (frame.done || frame.value.data === '[DONE]') break;
      const event = parseEvent(frame.value.data);
      if (!event) {
        yield { type: 'error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a stream frame that is not a JSON event.` };
        return;
      }
      translator.accept(event, batch);
      for (const translated of batch) {
        if (translated.type === 'error') {
          yield { ...translated, message: `The upstream '${provider}' reported: ${translated.message}` };
          return;
        }
        yield translated;
      }
      batch.length = 0;
    }
  } catch (error) {
    if (signal.aborted) throw error;
    const mapped = errorFromTransport(provider, error);
    yield { type: 'error', code: mapped.code ?? 'upstream_error', message: mapped.message };
    return;
  } finally {
    await frames.return(undefined);
  }
  if (!translator.finished) {
    yield { type: 'error', code: 'upstream_stream_truncated', message: `The upstream '${provider}' closed the stream before the model finished.` };
    return;
  }
  translator.finish(batch);
  yield* batch;
}

function parseEvent(data: string): ResponsesStreamEvent | null {
  try {
    const value: unknown = JSON.parse(data);
    return value !== null && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string' ? (value as ResponsesStreamEvent) : null;
  } catch {
    return null;
  }
}
