import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answersApprovalRequests } from '../../engine/approval-answers.ts';
import { collectResponse } from '../../engine/collect-response.ts';
import { loggingObserver, type LoopObserver } from '../../engine/loop-observer.ts';
import type { BackgroundStart, ResponseEngine, ResponseRun } from '../../engine/response-engine.ts';
import type { CreateResponseRequest } from '../../protocol/create-response-request.ts';
import { parseCreateResponseRequest } from '../../protocol/parse-create-response-request.ts';
import type { ResponseResource } from '../../protocol/response-resource.ts';
import { responseJson } from '../../protocol/response-json.ts';
import type { ResponseStreamEvent } from '../../protocol/stream-events.ts';
import { streamBackgroundEvents, type BackgroundStreamSource } from '../background-stream.ts';
import { carriesIdempotencyKey, takeIdempotencyKey, type IdempotencyHold, type IdempotencyOptions } from '../idempotency.ts';
import { abortOnDisconnect } from '../abort-on-disconnect.ts';
import { deliverEvents } from '../deliver-events.ts';
import { ResponseLog } from '../response-log.ts';
import { SseWriter, type StreamPacing, type StreamWatcher } from '../sse-writer.ts';
import { Admission } from '../rate-limits/admission.ts';
import type { RateLimitGate } from '../rate-limits/rate-limit-gate.ts';
import type { Tracing } from '../../observability/tracing.ts';
import { traceContextOf } from '../../util/trace-context.ts';

export interface ResponsesRouteOptions {
  engine: ResponseEngine;
  pacing: StreamPacing;
  /** Where `background: true` responses are streamed from. */
  background: BackgroundStreamSource;
  idempotency: IdempotencyOptions;
  /** Told of every stream opened and closed (metrics). */
  streams?: StreamWatcher | null;
  /** Rate limits and quotas per API key, checked before anything else runs. */
  rateLimits: RateLimitGate;
  /** Traces each response when tracing is on, under the client's traceparent. */
  tracing?: Tracing | null;
}

/** Marks the route whose own summary line replaces Fastify's "request completed" (log-controller.ts). */
export const WRITES_OWN_LOG_LINE = { ownLogLine: true };

/** `POST /v1/responses`: one engine call, then SSE or JSON from the same event stream; one log line per response. */
export function registerResponsesRoute(app: FastifyInstance, options: ResponsesRouteOptions): void {
  app.post('/v1/responses', { config: WRITES_OWN_LOG_LINE }, async (request, reply) => {
    const body = parseCreateResponseRequest(request.body);
    if (!carriesIdempotencyKey(request)) return respond(request, reply, body, options, null);
    const hold = await takeIdempotencyKey(request, reply, body.stream === true, options.idempotency, options.background, answersApprovalRequests(body));
    if (hold === null) return reply; // a retry, answered with the first request's response
    if (hold === 'none') return respond(request, reply, body, options, null);
    try {
      return await respond(request, reply, body, options, hold);
    } catch (error) {
      await hold.release().catch(() => {});
      throw error;
    }
  });
}

/** One response, settling the request's Idempotency-Key (if any) with it. */
async function respond(request: FastifyRequest, reply: FastifyReply, body: CreateResponseRequest, options: ResponsesRouteOptions, hold: IdempotencyHold | null): Promise<FastifyReply> {
  const signal = abortOnDisconnect(reply);
  // Building log objects costs even when they are dropped: observe only at the levels kept.
  const log = request.log as typeof request.log & { isLevelEnabled?(level: string): boolean };
  const summary = log.isLevelEnabled?.('info') ? new ResponseLog() : null;
  // A refused request (429) has cost nothing yet: no store read, no tool listing, no upstream call.
  const admitting = options.rateLimits.admit(request.apiKeyId, { concurrent: true });
  const admission = admitting instanceof Admission ? admitting : await admitting;
  if (admission.metered) reply.headers(admission.headers());
  // Traced under the client's traceparent; the trace starts with the response (a request refused before it has none).
  const tracer = options.tracing?.observer(traceContextOf(request.headers)) ?? null;
  if (body.background) return startBackground(request, reply, body, options, summary, hold, admission, tracer);
  const observers: LoopObserver[] = [];
  if (admission.metered) observers.push(admission.observer);
  if (summary) observers.push(summary);
  if (log.isLevelEnabled?.('debug')) observers.push(loggingObserver(log));
  if (tracer) observers.push(tracer);
  let run: ResponseRun;
  try {
    // Throws before anything is sent when the upstream fails at once: the client gets a real status.
    run = await options.engine.createResponse(body, { tenant: request.tenant, signal, observers, ...(admission.metered && { admit: admission.reserveTokens }), delivery: body.stream ? 'events' : 'final', rerunIfInterrupted: hold?.rerunsInterrupted === true });
  } catch (error) {
    await admission.done();
    if (!signal.aborted) {
      // No response line follows: the refusal's line (error-handler.ts) says whose request it was and for what.
      request.log = request.log.child({ tenant: request.tenant, model: body.model ?? null, stream: body.stream === true });
      throw error;
    }
    request.log.info('client disconnected before the response started');
    await hold?.release();
    return reply;
  }
  if (admission.metered) reply.headers(admission.headers());
  // Tools the model was not offered are said, never silently dropped (README: hosted tools).
  if (run.omittedTools.length > 0) reply.header('x-loopgate-omitted-tools', run.omittedTools.join(','));
  if (run.deployment) reply.header('x-loopgate-deployment', run.deployment);
  const finished = (response: ResponseResource | null) => {
    if (response && summary) summary.write(request.log, response, { tenant: request.tenant, provider: run.provider, upstreamModel: run.upstreamModel, stream: body.stream === true, omittedTools: run.omittedTools, deployment: run.deployment });
  };
  if (body.stream) {
    const final = await streamEvents(request, reply, run.events, options, summary, () => admission.done());
    finished(final);
    if (hold) await settle(hold, final, request);
    return reply;
  }
  let response: ResponseResource | null;
  try {
    response = await collectResponse(run.events);
  } finally {
    if (admission.metered) await admission.done();
  }
  summary?.firstByte();
  // The answer is here: a key that cannot be settled now (the store paused) is said in the log, never the client's failure.
  if (hold) await settle(hold, response, request);
  try {
    // The client is gone: nothing to send. A stored response goes out as the JSON its store made of it (protocol/response-json.ts).
    if (!signal.aborted) {
      if (response) reply.header('content-type', 'application/json; charset=utf-8').send(responseJson(response));
      else reply.send(response);
    }
  } finally {
    // Written once the body is out (Fastify writes it at once: no onSend hooks): the client does not wait for the line.
    finished(response);
  }
  return reply;
}

/**
 * `background: true`: answered at once with the `queued` response, or, with
 * `stream: true`, with its events from the event log — a dropped connection
 * stops the reading, not the response.
 */
async function startBackground(request: FastifyRequest, reply: FastifyReply, body: CreateResponseRequest, options: ResponsesRouteOptions, summary: ResponseLog | null, hold: IdempotencyHold | null, admission: Admission, tracer: LoopObserver | null): Promise<FastifyReply> {
  let started: BackgroundStart;
  try {
    // The admission settles when the response ends, on this replica's runner, long after this request; a trace follows it to its end too.
    started = await options.engine.createBackground(body, { tenant: request.tenant, requestId: request.id, observers: [admission.observer, ...(tracer ? [tracer] : [])], admit: admission.reserveTokens });
  } catch (error) {
    await admission.done();
    request.log = request.log.child({ tenant: request.tenant, model: body.model ?? null, stream: body.stream === true, background: true });
    throw error;
  }
  reply.headers(admission.headers());
  if (started.omittedTools.length > 0) reply.header('x-loopgate-omitted-tools', started.omittedTools.join(','));
  const response = started.record.response;
  // Queued, it runs whatever happens to this request: the client gets it, with or without its key settled.
  if (hold) await settle(hold, response, request);
  // This request's line; the runner writes the response's own when it ends.
  if (summary) request.log.info({ response_id: response.id, tenant: request.tenant, model: response.model, upstream_model: started.upstreamModel, provider: started.provider, status: response.status, background: true, stream: body.stream === true }, 'background response queued');
  if (!body.stream) return reply.send(response);
  await streamBackgroundEvents(request, reply, options.background, response.id, -1);
  return reply;
}


/** The key named for the response (or let go without one); a store that fails then is logged, and the lease lets the key go within 30 s. */
function settle(hold: IdempotencyHold, response: ResponseResource | null, request: FastifyRequest): Promise<void> {
  return (response ? hold.complete(response) : hold.release()).catch((error: unknown) => request.log.warn({ err: error }, 'idempotency key not settled'));
}

/** Writes the events as SSE (then `[DONE]`) and returns the final response. */
async function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  batches: AsyncGenerator<ResponseStreamEvent[]>,
  options: ResponsesRouteOptions,
  summary: ResponseLog | null,
  beforeEnd: () => Promise<void>,
): Promise<ResponseResource | null> {
  reply.hijack();
  const writer = new SseWriter(reply.raw, reply.getHeaders() as Record<string, string>, options.pacing, options.streams);
  let final: ResponseResource | null = null;
  try {
    const delivery = await deliverEvents(batches, (event) => writer.event(event.type, JSON.stringify(event)), () => summary?.firstByte());
    final = delivery.final;
    await beforeEnd();
    if (delivery.delivered) await writer.write('data: [DONE]\n\n');
    else request.log.info({ response_id: final?.id }, 'client disconnected during the stream');
  } catch (error) {
    // Headers are out; the stream is all that is left to end.
    request.log.error({ err: error }, 'event stream failed');
  } finally {
    writer.end();
  }
  return final;
}
