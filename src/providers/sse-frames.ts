import { Readable } from 'node:stream';

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
 */
export async function* readSseFrameBatches(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame[]> {
  const stream = body instanceof Readable ? body : null;
  const chunks = stream ? stream.iterator({ destroyOnReturn: false }) : body;
  let readToEnd = false;
  try {
    const decoder = new TextDecoder();
    let buffer = '';
    let event: string | null = null;
    let data: string[] = [];
    let batch: SseFrame[] = [];

    for await (const chunk of chunks) {
      buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      let start = 0;
      const hasCarriageReturn = buffer.includes('\r');
      for (;;) {
        const lineEnd = hasCarriageReturn ? findLineEnd(buffer, start) : buffer.indexOf('\n', start);
        if (lineEnd < 0) break;
        const line = buffer.slice(start, lineEnd);
        // A CR at the very end might be the first half of a CRLF split across chunks.
        if (buffer.charCodeAt(lineEnd) === 13) {
          if (lineEnd + 1 >= buffer.length) break;
          start = buffer.charCodeAt(lineEnd + 1) === 10 ? lineEnd + 2 : lineEnd + 1;
        } else {
          start = lineEnd + 1;
        }
        if (line === '') {
          if (data.length > 0) batch.push({ event, data: data.join('\n') });
          event = null;
          data = [];
          continue;
        }
        if (line.charCodeAt(0) === 58) continue; // ':' comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
      }
      buffer = buffer.slice(start);
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
    }
    readToEnd = true;
    buffer += decoder.decode();
    if (buffer.length > 0) {
      for (const line of buffer.split(/\r\n|\r|\n/)) {
        if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
        else if (line.startsWith('event:')) event = line.slice(6).trimStart();
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
