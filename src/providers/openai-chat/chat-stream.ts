import type { TurnEvent, TurnStream } from '../provider.ts';
import type { SseFrame } from '../sse-frames.ts';
import { errorFromTransport, errorFromUpstreamFrame } from '../upstream-errors.ts';
import { ChatChunkTranslator } from './chat-chunk-translator.ts';
import type { ChatChunk } from './chat-wire.ts';
import { invalidUpstreamBody } from './invalid-upstream-body.ts';

/**
 * Starts reading a streamed Chat Completion. Frames are read up to the first
 * one with content before this resolves, so an upstream that fails at once
 * (an error frame after its 200, a dropped connection) rejects with a
 * `GatewayError` and the client still gets a real HTTP status. Everything after
 * that arrives as turn events, failures included.
 */
export async function startChatStream(frames: AsyncGenerator<SseFrame>, provider: string, signal: AbortSignal): Promise<TurnStream> {
  const translator = new ChatChunkTranslator();
  const first: TurnEvent[] = [];
  let firstFrame: IteratorResult<SseFrame>;
  try {
    firstFrame = await frames.next();
  } catch (error) {
    if (signal.aborted) throw error;
    throw errorFromTransport(provider, error);
  }
  const ended = firstFrame.done === true || firstFrame.value.data === '[DONE]';
  if (!ended) {
    const chunk = parseChunk(firstFrame.value.data);
    if (!chunk) {
      await frames.return(undefined);
      throw invalidUpstreamBody(provider, 'the first stream frame is not JSON');
    }
    translator.accept(chunk, first);
    const error = first.find((event) => event.type === 'error');
    if (error) {
      await frames.return(undefined);
      throw errorFromUpstreamFrame(provider, error.code, error.message);
    }
  }
  return continueChatStream(frames, translator, first, ended, provider, signal);
}

async function* continueChatStream(
  frames: AsyncGenerator<SseFrame>,
  translator: ChatChunkTranslator,
  first: TurnEvent[],
  ended: boolean,
  provider: string,
  signal: AbortSignal,
): AsyncGenerator<TurnEvent> {
  yield* first;
  const batch: TurnEvent[] = [];
  try {
    if (!ended) {
      for await (const frame of frames) {
        if (frame.data === '[DONE]') break;
        const chunk = parseChunk(frame.data);
        if (!chunk) {
          yield { type: 'error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a stream frame that is not JSON.` };
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

function parseChunk(data: string): ChatChunk | null {
  try {
    const value: unknown = JSON.parse(data);
    return value !== null && typeof value === 'object' ? (value as ChatChunk) : null;
  } catch {
    return null;
  }
}
