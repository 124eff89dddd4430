import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { GatewayError } from '../errors/gateway-error.ts';

/** Bodies this small are always taken: a full budget refuses large bodies, not the ordinary requests beside them. */
const ALWAYS_TAKEN_BYTES = 64 * 1024;

/** One body's bytes, as they arrive. */
interface BodyCount {
  bytes: number;
}

/**
 * Request bodies being read, parsed and validated at once, bounded over
 * every request. The body limit bounds one request; a body costs about four
 * times its size on the heap while it is read, parsed and checked, and a few
 * bodies near the limit at once took a container-sized heap down (three of
 * 45 MB on a 256 MB heap), every response in flight with it. Bytes are
 * counted as they arrive, decompressed (a compressed body, and a chunked one
 * with no `Content-Length`, count what they become; a `Content-Length` that
 * promises more than comes holds nothing). A body that grows past 64 KiB
 * while others are being read, and would take the total past the budget, is
 * refused with a 503 the SDKs retry; one larger than the whole budget is a
 * 413 (a heap that small cannot take it at all). A body's bytes count until
 * its handler starts (or it is answered before that). Bodies that say they
 * are under 64 KiB, uncompressed, are not counted at all (Fastify holds them
 * to their `Content-Length`).
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

  /** The body is read and checked (or answered): its bytes no longer count. */
  release(count: BodyCount): void {
    this.#inFlight -= count.bytes;
    count.bytes = 0;
  }
}

/** Counts each request's body against the budget as it arrives (after decompression: register after request-decoding.ts). */
export function registerBodyBudget(app: FastifyInstance, budget: BodyBudget): void {
  const counts = new WeakMap<FastifyRequest, BodyCount>();
  const release = (request: FastifyRequest) => {
    const count = counts.get(request);
    if (!count) return;
    counts.delete(request);
    budget.release(count);
  };
  app.addHook('onRequest', (request, _reply, done) => {
    // Said before a byte is read when it says so itself.
    const declared = Number(request.headers['content-length']);
    done(declared > budget.budgetBytes ? tooLarge(declared, budget.budgetBytes) : undefined);
  });
  app.addHook('preParsing', (request, reply, payload, done) => {
    // A body that says it is small, and is not compressed, is taken as it comes: most requests, with nothing in their way.
    const { headers } = request;
    if (headers['transfer-encoding'] === undefined && headers['content-encoding'] === undefined && !(Number(headers['content-length']) > ALWAYS_TAKEN_BYTES)) return done(null, payload);
    const count: BodyCount = { bytes: 0 };
    counts.set(request, count);
    // Answered before its handler ran (refused, invalid, the client gone): counted out then.
    reply.raw.once('close', () => release(request));
    done(null, counted(payload, (bytes) => budget.add(count, bytes)));
  });
  app.addHook('preHandler', (request, _reply, done) => {
    release(request);
    done();
  });
}

/** The body, passed on as it is counted. Fastify checks `Content-Length` against `receivedEncodedLength`: the inner stream's when it decodes, else what came. */
function counted(payload: Readable & { receivedEncodedLength?: number }, add: (bytes: number) => GatewayError | null): Readable {
  let received = 0;
  const body = new (class extends Transform {
    get receivedEncodedLength(): number {
      return payload.receivedEncodedLength ?? received;
    }

    override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
      const refusal = add(chunk.length);
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
