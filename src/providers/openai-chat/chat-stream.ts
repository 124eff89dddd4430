import { startFrameStream } from '../first-frame.ts';
import type { TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromUpstreamFrame } from '../upstream-errors.ts';
import { ChatChunkTranslator } from './chat-chunk-translator.ts';
import type { ChatChunk } from './chat-wire.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { chatParamAsResponses } from './chat-param.ts';
import type { ReasoningHeard } from './reasoning-field.ts';

/**
 * Starts reading a streamed Chat Completion: chunks are read up to the first
 * with content before this resolves (see `startFrameStream`) — servers open
 * with a chunk holding only the role, and a stream that breaks after it has
 * still shown the client nothing, so routing may yet hand the call to
 * another deployment. The stream is read to `[DONE]`, past the finish
 * reason, because usage comes in a chunk of its own after it.
 */
export function startChatStream(frames: AsyncGenerator<SseFrame[]>, provider: string, signal: AbortSignal, heard: ((what: ReasoningHeard) => void) | null = null): Promise<TurnStream> {
  return startFrameStream(
    frames,
    {
      provider,
      translator: new ChatChunkTranslator(heard),
      parse: parseChunk,
      isEndMarker: (data) => data === '[DONE]',
      peek: 'until content',
      stopWhenFinished: false,
      unparsable: 'not JSON',
      invalidFirstFrame: () => invalidUpstreamBody(provider, 'the first stream frame is not JSON'),
      errorFromFrame: (failure) => errorFromUpstreamFrame(provider, failure.code, failure.message, failure.status, failure.param, chatParamAsResponses),
    },
    signal,
  );
}

function parseChunk(data: string, event: string | null): ChatChunk | null {
  try {
    const value: unknown = JSON.parse(data);
    if (value === null || typeof value !== 'object') return null;
    // An `error` event holds the error itself (llama.cpp's `error:` lines; `sse-frames.ts`).
    return event === 'error' && !('error' in value) ? { error: value as ChatChunk['error'] } : (value as ChatChunk);
  } catch {
    return null;
  }
}
