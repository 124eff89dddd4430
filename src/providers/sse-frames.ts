import { Readable } from 'node:stream';
import { MAX_UPSTREAM_EVENT_CHARS, UpstreamAnswerTooLarge } from './upstream-answer-limits.ts';

/**
 * Server-sent events from an upstream, in layers: bytes → lines → frames.
 * Follows the WHATWG event-stream rules that matter for model APIs: CRLF, CR or
 * LF line ends, `data:` lines joined with "\n", comments ignored, and a frame
 * dispatched on a blank line (or at end of stream).
 */
export interface SseFrame {
  event: string | null;
  data: string;
}

/** The frames one at a time (for readers that want no batches). */
export async function* readSseFrames(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  for await (const batch of readSseFrameBatches(body)) yield* batch;
}

/**
 * The frames in batches: those completed by one read of the body. A model's
 * tokens mostly arrive several to a read, and each step through an async
 * generator costs a few promises: the stream readers take a read's frames in
 * one step. Never yields an empty batch.
 *
 * An event (its unfinished line, or its data lines together) longer than
 * `maxEventChars` throws `UpstreamAnswerTooLarge`: a line that never ends
 * would otherwise grow without bound. A read with no line end in it is kept
 * aside as it came, not joined to the line so far (copying that line again at
 * every read made a long one cost its length squared).
 */
export async function* readSseFrameBatches(body: AsyncIterable<Uint8Array | string>, maxEventChars = MAX_UPSTREAM_EVENT_CHARS): AsyncGenerator<SseFrame[]> {
  const stream = body instanceof Readable ? body : null;
  const chunks = stream ? stream.iterator({ destroyOnReturn: false }) : body;
  let readToEnd = false;
  try {
    const decoder = new TextDecoder();
    /** The unfinished line so far, in the pieces it came in; it ends in a CR when `pendingCarriageReturn` (maybe half of a CRLF). */
    let pending: string[] = [];
    let pendingChars = 0;
    let pendingCarriageReturn = false;
    let carriageReturns = false;
    let event: string | null = null;
    let data: string[] = [];
    let dataChars = 0;
    let batch: SseFrame[] = [];
    const tooLarge = () => new UpstreamAnswerTooLarge('an event', maxEventChars, 'characters');

    for await (const chunk of chunks) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      carriageReturns ||= text.includes('\r');
      if (!pendingCarriageReturn && (carriageReturns ? findLineEnd(text, 0) : text.indexOf('\n')) < 0) {
        pending.push(text);
        pendingChars += text.length;
        if (pendingChars > maxEventChars) throw tooLarge();
        continue;
      }
      const buffer = pending.length === 0 ? text : pending.length === 1 ? pending[0] + text : pending.join('') + text;
      let start = 0;
      for (;;) {
        const lineEnd = carriageReturns ? findLineEnd(buffer, start) : buffer.indexOf('\n', start);
        if (lineEnd < 0) break;
        // A CR at the very end might be the first half of a CRLF split across chunks.
        if (buffer.charCodeAt(lineEnd) === 13 && lineEnd + 1 >= buffer.length) break;
        const line = buffer.slice(start, lineEnd);
        start = buffer.charCodeAt(lineEnd) === 13 && buffer.charCodeAt(lineEnd + 1) === 10 ? lineEnd + 2 : lineEnd + 1;
        if (line === '') {
          if (data.length > 0) batch.push({ event, data: data.join('\n') });
          event = null;
          data = [];
          dataChars = 0;
          continue;
        }
        if (line.charCodeAt(0) === 58) continue; // ':' comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'data') {
          data.push(value);
          dataChars += value.length;
          if (dataChars > maxEventChars) throw tooLarge();
        } else if (field === 'event') event = value;
        else if (field === 'error') {
          // Not a field of the standard: llama.cpp's server sent its errors so until late 2025 (`error: {...}` after a 200); kept as an `error` event.
          event = 'error';
          data.push(value);
          dataChars += value.length;
          if (dataChars > maxEventChars) throw tooLarge();
        }
      }
      const rest = start === buffer.length ? '' : buffer.slice(start);
      pending = rest === '' ? [] : [rest];
      pendingChars = rest.length;
      pendingCarriageReturn = rest.charCodeAt(rest.length - 1) === 13;
      if (pendingChars > maxEventChars) throw tooLarge();
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
    }
    readToEnd = true;
    const buffer = pending.join('') + decoder.decode();
    if (buffer.length > 0) {
      for (const line of buffer.split(/\r\n|\r|\n/)) {
        if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
        else if (line.startsWith('event:')) event = line.slice(6).trimStart();
        else if (line.startsWith('error:')) {
          event = 'error';
          data.push(line.slice(line.charCodeAt(6) === 32 ? 7 : 6));
        }
      }
    }
    if (data.length > 0) yield [{ event, data: data.join('\n') }];
  } finally {
    if (stream && !readToEnd) release(stream);
  }
}

/**
 * A reader that stopped early lets go of the body. Usually everything has
 * arrived already (the end marker was the last frame): draining the rest ends
 * the stream quietly, where destroying it — what a `for await` that stops
 * does — builds an AbortError with its stack trace for every streamed turn.
 * A body still arriving is cut, as before.
 */
function release(stream: Readable): void {
  const state = (stream as Readable & { _readableState?: { ended?: boolean } })._readableState;
  if (stream.readableEnded || state?.ended === true) stream.resume();
  else stream.destroy();
}

function findLineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || code === 13) return i;
  }
  return -1;
}
