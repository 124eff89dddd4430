import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../readiness.ts';

/**
 * `GET /healthz`: the process is up and serving (it stays up while draining).
 * `GET /readyz`: it can take traffic; the body says the state of each
 * dependency either way. Probes are logged only at debug: an orchestrator
 * polls them every few seconds.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: () => Readiness): void {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const state = readiness();
    if (state.ready) return { status: 'ready', dependencies: state.dependencies };
    return reply.code(503).send({ status: 'not_ready', reason: state.reason ?? null, dependencies: state.dependencies });
  });
}
