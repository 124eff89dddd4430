import type { FastifyInstance } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { GatewayError } from '../errors/gateway-error.ts';

/** Bodies this small are always taken: a full budget refuses large bodies, not the ordinary requests beside them. */
const ALWAYS_TAKEN_BYTES = 64 * 1024;

/**
 * Request bodies being read, parsed and validated at once, bounded over
 * every request. The body limit bounds one request; a body costs about four
 * times its size on the heap while it is read, parsed and checked, and a few
 * bodies near the limit at once took a container-sized heap down (three of
 * 45 MB on a 256 MB heap), every response in flight with it. A body that
 * would take the total past the budget is refused at once with a 503 the
 * SDKs retry, unless nothing else is in flight; one larger than the whole
 * budget is a 413 (a heap that small cannot take it at all). Its bytes
 * count from the request's arrival until its handler starts (or it is
 * answered before that).
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

  get inFlightBytes(): number {
    return this.#inFlight;
  }

  get budgetBytes(): number {
    return this.#budgetBytes;
  }

  /** Counts a body in, or says why not (nothing counted): larger than the whole budget, or not fitting beside the bodies in flight. */
  take(bytes: number): 'taken' | 'too_large' | 'busy' {
    if (bytes > this.#budgetBytes) return 'too_large';
    if (bytes > ALWAYS_TAKEN_BYTES && this.#inFlight > 0 && this.#inFlight + bytes > this.#budgetBytes) return 'busy';
    this.#inFlight += bytes;
    return 'taken';
  }

  give(bytes: number): void {
    this.#inFlight -= bytes;
  }
}

/** Counts each request's body (by its `Content-Length`) against the budget: refused before it is read when it does not fit. */
export function registerBodyBudget(app: FastifyInstance, budget: BodyBudget): void {
  const counted = new WeakMap<object, number>();
  const give = (request: object) => {
    const bytes = counted.get(request);
    if (bytes === undefined) return;
    counted.delete(request);
    budget.give(bytes);
  };
  app.addHook('onRequest', (request, reply, done) => {
    const bytes = Number(request.headers['content-length']);
    if (!(bytes > 0)) return done();
    const taken = budget.take(bytes);
    if (taken === 'too_large') {
      return done(new GatewayError({ status: 413, type: 'invalid_request_error', code: 'request_too_large', message: `The request body (${megabytes(bytes)} MB) is larger than this gateway's memory allows (${megabytes(budget.budgetBytes)} MB: an eighth of its JS heap).` }));
    }
    if (taken === 'busy') {
      reply.header('retry-after', '1');
      return done(
        new GatewayError({
          status: 503,
          type: 'server_error',
          code: 'server_overloaded',
          message: `This gateway is reading other large request bodies (${megabytes(budget.inFlightBytes)} MB); this one (${megabytes(bytes)} MB) would take it past what its memory allows. Retry shortly.`,
        }),
      );
    }
    counted.set(request, bytes);
    // Answered before its handler ran (refused, invalid, the client gone): counted out then.
    reply.raw.once('close', () => give(request));
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    give(request);
    done();
  });
}

function megabytes(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}
