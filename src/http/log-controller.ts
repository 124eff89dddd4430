import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { loggedUrl } from './logged-url.ts';

/** pino's loggers say which levels they keep; Fastify's logger type does not declare it. */
type LevelAware = { isLevelEnabled?(level: string): boolean };

/**
 * Fastify's request lines, made fit for operators: one line per request, at
 * info, when it completes (method, path, status, duration) instead of two;
 * the incoming line only at debug; and none at info for routes that write
 * their own summary (`POST /v1/responses` writes one line per response) or
 * for requests refused with an error (the error handler's line says why).
 * Probe routes set their own log level (health-routes.ts).
 */
export class GatewayLogController extends LogController {
  /** Requests whose line was already written (a refusal, by the error handler): their completion is detail. */
  static readonly #logged = new WeakSet<FastifyRequest>();

  /** Says this request's one info line is written; its completion is then logged at debug only. */
  static lineWritten(request: FastifyRequest): void {
    GatewayLogController.#logged.add(request);
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request) || (request.log as LevelAware).isLevelEnabled?.('debug') === false) return;
    request.log.debug({ method: request.method, url: loggedUrl(request.url) }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    // A completion is logged at info or debug: above info (warn, the usual production level) there is no line, so no fields to build.
    if (!error && (reply.log as LevelAware).isLevelEnabled?.('info') === false) return;
    const fields = { method: request.method, url: loggedUrl(request.url), status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else if ((request.routeOptions.config as { ownLogLine?: boolean } | undefined)?.ownLogLine || GatewayLogController.#logged.has(request)) reply.log.debug(fields, 'request completed');
    else reply.log.info(fields, 'request completed');
  }
}
