import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/load-config.ts';
import type { GatewayMetrics } from '../observability/gateway-metrics.ts';
import { metricsAccess } from './metrics-access.ts';
import { MetricsListener } from './metrics-listener.ts';
import { registerMetricsRoute } from './routes/metrics-route.ts';

/**
 * Serves `/metrics` where the configuration says: a route on the main port,
 * or a listener of its own that opens when the app is ready (a port that
 * cannot be had stops the start) and closes with it.
 */
export function serveMetrics(app: FastifyInstance, metrics: GatewayMetrics, config: GatewayConfig): void {
  const { port, host, path, token } = config.metrics;
  if (port === null) {
    registerMetricsRoute(app, metrics, { path, access: metricsAccess(token, config.auth.apiKeys.length > 0) });
    return;
  }
  const listener = new MetricsListener(metrics, { host: host ?? config.server.host, port, path, access: metricsAccess(token, false) });
  app.addHook('onReady', async () => {
    const address = await listener.listen();
    app.log.info({ metrics_address: address.address, metrics_port: address.port, metrics_path: path }, 'metrics listening on a port of their own');
  });
  app.addHook('onClose', () => listener.close());
}
