/**
 * Where the memory store keeps its responses' JSON: UTF-8 bytes outside the
 * JavaScript heap, written one after another into chunks of a megabyte.
 *
 * Why: kept as strings, every stored response (a kilobyte and more) was
 * copied by two young-generation collections on its way to the old one and
 * then swept from there when evicted; at thousands of responses a second
 * that was a large part of what the store cost. Here the bytes are
 * copied once, into memory the collector never moves or scans.
 *
 * A chunk is given back when nothing in it is held any more. The store
 * evicts oldest first and writes a response read again anew (`move`), so
 * chunks empty in the order they filled, and what the arena holds stays
 * close to what is live. Emptied chunks are kept for reuse (a few), so the
 * arena does not churn external memory, which V8 counts towards collections.
 */
const CHUNK_BYTES = 1 << 20;
const SPARE_CHUNKS = 2;

export interface Chunk {
  bytes: Buffer;
  /** Spans in this chunk still held. */
  held: number;
}

/**
 * Two texts written one after the other: a stored response's JSON and its
 * input items'. The arena writes where they are into the span it is given,
 * so that a store's entry can be its own span: one object fewer for every
 * stored response to carry into the old generation.
 */
export interface Span {
  chunk: Chunk;
  offset: number;
  firstLength: number;
  secondLength: number;
}

/** What a span holds before it is written. */
export const UNWRITTEN: Chunk = { bytes: Buffer.alloc(0), held: 0 };

export class ByteArena {
  #current: Chunk | null = null;
  #used = 0;
  readonly #spare: Chunk[] = [];

  /** Writes both texts as UTF-8, one after the other, and where they are into `span` (a new one by default), which it returns. */
  write(first: string, second: string, span: Span = { chunk: UNWRITTEN, offset: 0, firstLength: 0, secondLength: 0 }): Span {
    span.firstLength = Buffer.byteLength(first);
    span.secondLength = Buffer.byteLength(second);
    this.#place(span);
    span.chunk.bytes.write(first, span.offset, span.firstLength, 'utf8');
    span.chunk.bytes.write(second, span.offset + span.firstLength, span.secondLength, 'utf8');
    return span;
  }

  /** The first text, or `length` bytes of it from byte `from` (a part of it whose place its writer knows). */
  first(span: Span, from = 0, length = span.firstLength - from): string {
    return span.chunk.bytes.toString('utf8', span.offset + from, span.offset + from + length);
  }

  second(span: Span): string {
    const start = span.offset + span.firstLength;
    return span.chunk.bytes.toString('utf8', start, start + span.secondLength);
  }

  /** The same bytes written anew at the end, the span pointing there (for a stored response used again, so that older chunks can empty); where they were is released. */
  move(span: Span): void {
    const { chunk, offset } = span;
    this.#place(span);
    chunk.bytes.copy(span.chunk.bytes, span.offset, offset, offset + span.firstLength + span.secondLength);
    this.#releaseIn(chunk);
  }

  /** The span is no longer needed. */
  release(span: Span): void {
    this.#releaseIn(span.chunk);
  }

  /** One span in `chunk` is no longer held: an emptied chunk becomes a spare (unless it is the one being written). */
  #releaseIn(chunk: Chunk): void {
    if (--chunk.held > 0 || chunk === this.#current) return;
    if (chunk.bytes.length === CHUNK_BYTES && this.#spare.length < SPARE_CHUNKS) this.#spare.push(chunk);
  }

  /** Room for the span's bytes, held, its chunk and offset set: at the end of the current chunk, in a fresh one, or in one of its own for texts larger than a chunk. */
  #place(span: Span): void {
    const length = span.firstLength + span.secondLength;
    if (length > CHUNK_BYTES) {
      span.chunk = { bytes: Buffer.allocUnsafeSlow(length), held: 1 };
      span.offset = 0;
      return;
    }
    if (!this.#current || this.#used + length > CHUNK_BYTES) {
      const previous = this.#current;
      this.#current = this.#spare.pop() ?? { bytes: Buffer.allocUnsafeSlow(CHUNK_BYTES), held: 0 };
      this.#used = 0;
      // The chunk left behind may be empty already (everything in it released while it was current).
      if (previous && previous.held === 0 && this.#spare.length < SPARE_CHUNKS) this.#spare.push(previous);
    }
    span.chunk = this.#current;
    span.offset = this.#used;
    this.#used += length;
    this.#current.held++;
  }
}
