import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's request lines, made fit for operators: one line per request, at
 * info, when it completes (method, path, status, duration) instead of two;
 * the incoming line only at debug; and none at info for routes that write
 * their own summary (`POST /v1/responses` writes one line per response).
 * Probe routes set their own log level (health-routes.ts).
 */
export class GatewayLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ method: request.method, url: request.url }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = { method: request.method, url: request.url, status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else if ((request.routeOptions.config as { ownLogLine?: boolean } | undefined)?.ownLogLine) reply.log.debug(fields, 'request completed');
    else reply.log.info(fields, 'request completed');
  }
}
