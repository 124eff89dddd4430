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

interface Chunk {
  bytes: Buffer;
  /** Spans in this chunk still held. */
  held: number;
}

/** Two texts written one after the other: a stored response's JSON and its input items'. */
export interface Span {
  chunk: Chunk;
  offset: number;
  firstLength: number;
  secondLength: number;
}

export class ByteArena {
  #current: Chunk | null = null;
  #used = 0;
  readonly #spare: Chunk[] = [];

  /** Writes both texts as UTF-8, one after the other. */
  write(first: string, second: string): Span {
    const firstLength = Buffer.byteLength(first);
    const secondLength = Buffer.byteLength(second);
    const { chunk, offset } = this.#room(firstLength + secondLength);
    chunk.bytes.write(first, offset, firstLength, 'utf8');
    chunk.bytes.write(second, offset + firstLength, secondLength, 'utf8');
    return { chunk, offset, firstLength, secondLength };
  }

  first(span: Span): string {
    return span.chunk.bytes.toString('utf8', span.offset, span.offset + span.firstLength);
  }

  second(span: Span): string {
    const start = span.offset + span.firstLength;
    return span.chunk.bytes.toString('utf8', start, start + span.secondLength);
  }

  /** The same bytes written anew at the end (for a stored response used again, so that older chunks can empty); the old span is released. */
  move(span: Span): Span {
    const length = span.firstLength + span.secondLength;
    const { chunk, offset } = this.#room(length);
    span.chunk.bytes.copy(chunk.bytes, offset, span.offset, span.offset + length);
    this.release(span);
    return { chunk, offset, firstLength: span.firstLength, secondLength: span.secondLength };
  }

  /** The span is no longer needed. */
  release(span: Span): void {
    const chunk = span.chunk;
    if (--chunk.held > 0 || chunk === this.#current) return;
    if (chunk.bytes.length === CHUNK_BYTES && this.#spare.length < SPARE_CHUNKS) this.#spare.push(chunk);
  }

  /** Room for `length` bytes, held: at the end of the current chunk, in a fresh one, or in one of its own for a text larger than a chunk. */
  #room(length: number): { chunk: Chunk; offset: number } {
    if (length > CHUNK_BYTES) return { chunk: { bytes: Buffer.allocUnsafeSlow(length), held: 1 }, offset: 0 };
    if (!this.#current || this.#used + length > CHUNK_BYTES) {
      const previous = this.#current;
      this.#current = this.#spare.pop() ?? { bytes: Buffer.allocUnsafeSlow(CHUNK_BYTES), held: 0 };
      this.#used = 0;
      // The chunk left behind may be empty already (everything in it released while it was current).
      if (previous && previous.held === 0 && this.#spare.length < SPARE_CHUNKS) this.#spare.push(previous);
    }
    const offset = this.#used;
    this.#used += length;
    this.#current.held++;
    return { chunk: this.#current, offset };
  }
}
