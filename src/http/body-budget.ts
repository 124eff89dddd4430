import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { GatewayError } from '../errors/gateway-error.ts';

/** Bodies this small are always taken: a full budget refuses large bodies, not the ordinary requests beside them. */
const ALWAYS_TAKEN_BYTES = 64 * 1024;

/** One body's bytes, as they arrive. */
interface BodyCount {
  bytes: number;
}

/**
 * Request bodies held at once, bounded over every request. The body limit
 * bounds one request; a body costs about four times its size on the heap
 * while it is read, parsed and checked, and the request's input is held
 * until its response ends: a few bodies near the limit at once took a
 * container-sized heap down (three of 45 MB on a 256 MB heap), every
 * response in flight with it. A body is counted as its `Content-Length`
 * says, before it is read, and by what it becomes as it arrives (a chunked
 * body, a compressed one decompressed). One over 64 KiB that would take the
 * total past the budget while others are held is refused with a 503 the
 * SDKs retry; one larger than the whole budget is a 413 (a heap that small
 * cannot take it at all). Bodies under 64 KiB that say so, uncompressed, are
 * not counted (Fastify holds them to their `Content-Length`).
 */
export class BodyBudget {
  readonly #budgetBytes: number;
  #inFlight = 0;

  constructor(budgetBytes: number) {
    this.#budgetBytes = budgetBytes;
  }

  /**
   * The default: an eighth of the JS heap's limit (which counts the young
   * generation too: `--max-old-space-size=128` makes it 320 MB), so that the
   * body limit's default, 50 MiB, is read whole from an old space of about
   * 256 MB up, and two such bodies at once from twice that.
   */
  static forHeap(heapLimitBytes = getHeapStatistics().heap_size_limit): BodyBudget {
    return new BodyBudget(Math.floor(heapLimitBytes / 8));
  }

  get budgetBytes(): number {
    return this.#budgetBytes;
  }

  /** Counts `bytes` more of a body, or refuses them (nothing counted). */
  add(count: BodyCount, bytes: number): GatewayError | null {
    const body = count.bytes + bytes;
    if (body > this.#budgetBytes) return tooLarge(body, this.#budgetBytes);
    const others = this.#inFlight - count.bytes;
    if (body > ALWAYS_TAKEN_BYTES && others > 0 && others + body > this.#budgetBytes) return busy(others, body);
    this.#inFlight += bytes;
    count.bytes = body;
    return null;
  }

  /** The body's response has ended: its bytes no longer count. */
  release(count: BodyCount): void {
    this.#inFlight -= count.bytes;
    count.bytes = 0;
  }
}

/**
 * Counts each request's body against the budget (register after
 * request-decoding.ts, to count what it decodes): what its `Content-Length`
 * says at once, before a byte is read, then more as more arrives; until its
 * response has been sent (the request's input is held that long).
 */
export function registerBodyBudget(app: FastifyInstance, budget: BodyBudget): void {
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request;
    const declared = Number(headers['content-length']) || 0;
    // A body that says it is small, and is not compressed, is taken as it comes: most requests, with nothing in their way.
    if (headers['transfer-encoding'] === undefined && headers['content-encoding'] === undefined && declared <= ALWAYS_TAKEN_BYTES) return done(null, payload);
    const count: BodyCount = { bytes: 0 };
    const refusal = budget.add(count, declared);
    if (refusal) return done(refusal);
    reply.raw.once('close', () => budget.release(count));
    done(null, counted(payload, (received) => (received > count.bytes ? budget.add(count, received - count.bytes) : null)));
  });
}

/** The body, passed on as it grows (`grow` is told its bytes so far). Fastify checks `Content-Length` against `receivedEncodedLength`: the inner stream's when it decodes, else what came. */
function counted(payload: Readable & { receivedEncodedLength?: number }, grow: (bytes: number) => GatewayError | null): Readable {
  let received = 0;
  const body = new (class extends Transform {
    get receivedEncodedLength(): number {
      return payload.receivedEncodedLength ?? received;
    }

    override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
      const refusal = grow(received + chunk.length);
      if (refusal) return callback(refusal);
      received += chunk.length;
      callback(null, chunk);
    }
  })();
  // Errors do not travel along pipes: the body's reader answers them; unheard (a route that reads no body), they must not end the process.
  payload.on('error', (error) => body.destroy(error));
  body.on('error', () => {});
  payload.pipe(body);
  return body;
}

function tooLarge(bytes: number, budgetBytes: number): GatewayError {
  return new GatewayError({ status: 413, type: 'invalid_request_error', code: 'request_too_large', message: `The request body (${megabytes(bytes)} MB or more) is larger than this gateway's memory allows (${megabytes(budgetBytes)} MB: an eighth of its JS heap).` });
}

function busy(others: number, bytes: number): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'server_error',
    code: 'server_overloaded',
    message: `This gateway is reading other large request bodies (${megabytes(others)} MB); this one (${megabytes(bytes)} MB so far) would take it past what its memory allows. Retry shortly.`,
    headers: { 'retry-after': '1' },
  });
}

function megabytes(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}
