import type { FastifyInstance } from 'fastify';
import type { GatewayMetrics } from '../../observability/gateway-metrics.ts';
import type { MetricsAccess } from '../metrics-access.ts';

/** `GET <metrics.path>` on the main port: the Prometheus text format, for those `access` lets in. Scrapes are logged only above info, as probes are. */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, options: { path: string; access: MetricsAccess }): void {
  app.get(options.path, { logLevel: 'warn' }, async (request, reply) => {
    const refusal = options.access(request.headers.authorization);
    if (refusal) throw refusal;
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
}
