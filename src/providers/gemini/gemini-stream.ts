import { startFrameStream } from '../first-frame.ts';
import type { TurnEvent, TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromGeminiFrame, unreadableGeminiBody } from './gemini-errors.ts';
import { GeminiStreamTranslator } from './gemini-stream-translator.ts';
import type { GeminiResponse } from './gemini-wire.ts';

/**
 * Starts reading `streamGenerateContent?alt=sse`: the first frame is read
 * before this resolves (see `startFrameStream`). Gemini sends no end marker;
 * the stream is read to its end, as usage may follow the finish reason.
 */
export function startGeminiStream(frames: AsyncGenerator<SseFrame[]>, provider: string, signal: AbortSignal): Promise<TurnStream> {
  return startFrameStream(
    frames,
    {
      provider,
      translator: new GeminiStreamTranslator(),
      parse: parseChunk,
      isEndMarker: () => false,
      peek: 'one frame',
      stopWhenFinished: false,
      unparsable: 'not a JSON object',
      invalidFirstFrame: () => unreadableGeminiBody(provider, 'the first stream frame is not a JSON object'),
      errorFromFrame: (failure) => errorFromGeminiFrame(provider, failure.code, failure.message),
    },
    signal,
  );
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
