import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayMetrics } from '../observability/gateway-metrics.ts';

/** The status a request is counted with when its client left before any answer began (nginx's word for it). */
const CLIENT_CLOSED_REQUEST = 499;
/** A WebSocket upgrade's answer, written on the socket the connection took over (never through `reply.raw`, which stays unsent). */
const SWITCHING_PROTOCOLS = 101;

/**
 * Counts the request by method, route pattern (`/v1/responses/:id`, never
 * the id) and status once its connection is done with it — also streams
 * (their status is the 200 they began with) and requests whose client left.
 * Called from the app's one `onRequest` hook (build-app.ts), for every request.
 */
export function countRequest(metrics: GatewayMetrics, request: FastifyRequest, reply: FastifyReply): void {
  const raw = reply.raw;
  // `close` comes once; `on` spares the wrapper `once` makes for every request.
  raw.on('close', () => metrics.request(request.method, request.routeOptions.url, raw.headersSent ? raw.statusCode : request.ws ? SWITCHING_PROTOCOLS : CLIENT_CLOSED_REQUEST));
}
