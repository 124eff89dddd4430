import type { TurnEvent, TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromTransport } from '../upstream-errors.ts';
import { errorFromGeminiFrame, unreadableGeminiBody } from './gemini-errors.ts';
import { GeminiStreamTranslator } from './gemini-stream-translator.ts';
import type { GeminiResponse } from './gemini-wire.ts';

/**
 * Starts reading `streamGenerateContent?alt=sse`. The first frame is read
 * before this resolves, so an upstream that fails at once (an error frame
 * after its 200, a dropped connection) rejects with a `GatewayError` and the
 * client still gets a real HTTP status. Later failures arrive as events.
 */
export async function startGeminiStream(frames: AsyncGenerator<SseFrame>, provider: string, signal: AbortSignal): Promise<TurnStream> {
  const translator = new GeminiStreamTranslator();
  const first: TurnEvent[] = [];
  let firstFrame: IteratorResult<SseFrame>;
  try {
    firstFrame = await frames.next();
  } catch (error) {
    if (signal.aborted) throw error;
    throw errorFromTransport(provider, error);
  }
  if (!firstFrame.done) {
    const chunk = parseChunk(firstFrame.value.data);
    if (!chunk) {
      await frames.return(undefined);
      throw unreadableGeminiBody(provider, 'the first stream frame is not a JSON object');
    }
    translator.accept(chunk, first);
    const error = first.find((event) => event.type === 'error');
    if (error) {
      await frames.return(undefined);
      throw errorFromGeminiFrame(provider, error.code, error.message);
    }
  }
  return continueGeminiStream(frames, translator, first, provider, signal);
}

async function* continueGeminiStream(frames: AsyncGenerator<SseFrame>, translator: GeminiStreamTranslator, first: TurnEvent[], provider: string, signal: AbortSignal): AsyncGenerator<TurnEvent> {
  yield* first;
  const batch: TurnEvent[] = [];
  try {
    for await (const frame of frames) {
      const chunk = parseChunk(frame.data);
      if (!chunk) {
        yield { type: 'error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a stream frame that is not a JSON object.` };
        return;
      }
      translator.accept(chunk, batch);
      for (const event of batch) {
        if (event.type === 'error') {
          yield { ...event, message: `The upstream '${provider}' reported: ${event.message}` };
          return;
        }
        yield event;
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

/** The whole answer of `generateContent`, as the events a stream of it would give. */
export function readGeminiResponse(body: unknown, provider: string): TurnEvent[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw unreadableGeminiBody(provider, 'the response is not a JSON object');
  const translator = new GeminiStreamTranslator();
  const events: TurnEvent[] = [];
  translator.accept(body as GeminiResponse, events);
  const error = events.find((event) => event.type === 'error');
  if (error) throw errorFromGeminiFrame(provider, error.code, error.message);
  if (!translator.finished) throw unreadableGeminiBody(provider, 'the response has no finish reason');
  translator.finish(events);
  return events;
}

function parseChunk(data: string): GeminiResponse | null {
  try {
    const value: unknown = JSON.parse(data);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as GeminiResponse) : null;
  } catch {
    return null;
  }
}
