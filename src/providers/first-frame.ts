import { GatewayError } from '../errors/gateway-error.ts';
import type { TurnEvent, TurnStream, TurnUsage } from './provider.ts';
import type { SseFrame } from './sse-frames.ts';
import { invalidUpstreamBody } from './invalid-upstream-body.ts';
import { errorFromTransport } from './upstream-errors.ts';

/** A provider's stream translator: wire frames in, turn events out. */
export interface FrameTranslator<Frame> {
  accept(frame: Frame, out: TurnEvent[]): void;
  finish(out: TurnEvent[]): void;
  readonly finished: boolean;
  /** The usage the upstream reported so far, where it reports it as it goes (Gemini, in every chunk); null before any. */
  usageSoFar?(): TurnUsage | null;
}

/** What one upstream's streaming wire format adds to the shared reading of its SSE frames. */
export interface StreamWire<Frame> {
  provider: string;
  translator: FrameTranslator<Frame>;
  /** The frame's data as this wire's frame, or null when it is not one; `event` is the frame's event name, if it has one. */
  parse(data: string, event: string | null): Frame | null;
  /** A frame whose data ends the stream (`[DONE]`), for wires that send one. */
  isEndMarker(data: string): boolean;
  /**
   * `one frame`: the first frame already says whether the upstream failed.
   * `until content`: the stream opens with lifecycle frames that say nothing yet.
   */
  peek: 'one frame' | 'until content';
  /** Stop reading once the translator saw the model finish, rather than at the stream's end (a wire that sends usage after the finish must not). */
  stopWhenFinished: boolean;
  /** What a frame that does not parse is, for error messages: "not JSON". */
  unparsable: string;
  /** The error for a frame that does not parse before the stream was committed. */
  invalidFirstFrame(): GatewayError;
  /** The error for an error the upstream sent in a frame before the stream was committed. */
  errorFromFrame(failure: Extract<TurnEvent, { type: 'error' }>): GatewayError;
}

/**
 * Starts reading a streamed answer. Frames are read up to the first one with
 * content before this resolves, so an upstream that fails at once (an error
 * frame after its 200, a dropped connection) rejects with a `GatewayError` and
 * the client still gets a real HTTP status. Everything after that arrives as
 * turn events, failures included. Frames come in batches (those of one read,
 * see `readSseFrameBatches`) but are taken one at a time, as if they came singly.
 */
export async function startFrameStream<Frame>(batches: AsyncGenerator<SseFrame[]>, wire: StreamWire<Frame>, signal: AbortSignal): Promise<TurnStream> {
  const { provider, translator } = wire;
  const first: TurnEvent[] = [];
  let ended = false;
  /** The wire's own end (`[DONE]`) came, rather than the connection's. */
  let endMarker = false;
  let framesRead = 0;
  /** The frames of the last batch read that were not needed yet. */
  let rest: SseFrame[] = [];
  const peeked = () => (wire.peek === 'one frame' ? framesRead > 0 : first.some(isAnswer));
  try {
    reading: while (!peeked() && !translator.finished) {
      const next = await batches.next();
      if (next.done) {
        ended = true;
        break;
      }
      const frames = next.value;
      for (let index = 0; index < frames.length; index++) {
        if (peeked() || translator.finished) {
          rest = frames.slice(index);
          break reading;
        }
        framesRead += 1;
        const frame = frames[index]!;
        if (wire.isEndMarker(frame.data)) {
          ended = endMarker = true;
          break reading;
        }
        const parsed = wire.parse(frame.data, frame.event);
        if (!parsed) throw wire.invalidFirstFrame();
        translator.accept(parsed, first);
      }
    }
  } catch (error) {
    await batches.return(undefined);
    if (signal.aborted || error instanceof GatewayError) throw error;
    throw errorFromTransport(provider, error);
  }
  // A body with no event at all is no stream (a web page where the API should be: a wrong base URL, a proxy's error
  // page): a 502 the client gets as such, not a stream that seems to break off.
  if (ended && framesRead === 0) throw invalidUpstreamBody(provider, new Error('the body holds no stream events'));
  const failure = first.find((event) => event.type === 'error');
  if (failure) {
    await batches.return(undefined);
    throw wire.errorFromFrame(failure);
  }
  // Ended before the model said anything: nothing is committed yet, so this is the call's refusal (routing may go elsewhere).
  if (ended && !translator.finished && !first.some(isAnswer)) throw new GatewayError({ status: 502, type: 'upstream_error', ...noAnswer(provider, endMarker) });
  return continueFrameStream(batches, wire, { first, rest, ended }, signal);
}

/** A stream that ended without the model's answer: its wire's end came (`upstream_no_answer`), or only the connection's. */
function noAnswer(provider: string, endMarker: boolean): { code: string; message: string } {
  return endMarker
    ? { code: 'upstream_no_answer', message: `The upstream '${provider}' ended its stream without an answer.` }
    : { code: 'upstream_stream_truncated', message: `The upstream '${provider}' closed the stream before the model finished.` };
}

async function* continueFrameStream<Frame>(batches: AsyncGenerator<SseFrame[]>, wire: StreamWire<Frame>, start: { first: TurnEvent[]; rest: SseFrame[]; ended: boolean }, signal: AbortSignal): AsyncGenerator<TurnEvent> {
  const { provider, translator } = wire;
  /** The usage reported so far, then the failure: a turn that fails is charged all the same. */
  const failing = (error: Extract<TurnEvent, { type: 'error' }>): TurnEvent[] => {
    const spent = translator.usageSoFar?.() ?? null;
    return spent ? [{ type: 'usage', usage: spent }, error] : [error];
  };
  yield* start.first;
  const batch: TurnEvent[] = [];
  let frames = start.rest;
  let index = 0;
  /** The wire's own end (`[DONE]`) arrived: the stream is whole, finish reason or not. */
  let complete = start.ended;
  let answered = start.first.some(isAnswer);
  try {
    while (!start.ended && !(wire.stopWhenFinished && translator.finished)) {
      if (index >= frames.length) {
        const next = await batches.next();
        if (next.done) break;
        frames = next.value;
        index = 0;
      }
      const frame = frames[index++]!;
      if (wire.isEndMarker(frame.data)) {
        complete = true;
        break;
      }
      const parsed = wire.parse(frame.data, frame.event);
      if (!parsed) {
        yield* failing({ type: 'error', code: 'upstream_invalid_response', message: `The upstream '${provider}' sent a stream frame that is ${wire.unparsable}.` });
        return;
      }
      translator.accept(parsed, batch);
      for (const event of batch) {
        if (event.type === 'error') {
          yield* failing({ ...event, message: `The upstream '${provider}' reported: ${event.message}` });
          return;
        }
        answered ||= isAnswer(event);
        yield event;
      }
      batch.length = 0;
    }
  } catch (error) {
    if (signal.aborted) throw error;
    const mapped = errorFromTransport(provider, error);
    yield* failing({ type: 'error', code: mapped.code ?? 'upstream_error', message: mapped.message });
    return;
  } finally {
    await batches.return(undefined);
  }
  // A stream its wire ended properly without a finish reason (some servers leave it out) is read as the same answer unstreamed would be.
  if (!translator.finished && !(complete && answered)) {
    yield* failing({ type: 'error', ...noAnswer(provider, complete) });
    return;
  }
  translator.finish(batch);
  yield* batch;
}

/** Whether the model said something: text, a refusal, reasoning, a call (not the upstream's bookkeeping). */
function isAnswer(event: TurnEvent): boolean {
  return event.type !== 'upstream.response' && event.type !== 'service_tier' && event.type !== 'usage';
}
