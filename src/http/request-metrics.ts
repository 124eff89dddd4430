import type { FastifyInstance } from 'fastify';
import type { GatewayMetrics } from '../observability/gateway-metrics.ts';

/** The status a request is counted with when its client left before any answer began (nginx's word for it). */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Counts every HTTP request by method, route pattern (`/v1/responses/:id`,
 * never the id) and status, once its connection is done with it — also
 * streams (their status is the 200 they began with) and requests whose
 * client left.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw = reply.raw;
    // `close` comes once; `on` spares the wrapper `once` makes for every request.
    raw.on('close', () => metrics.request(request.method, request.routeOptions.url, raw.headersSent ? raw.statusCode : CLIENT_CLOSED_REQUEST));
    done();
  });
}
