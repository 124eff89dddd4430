import type { FastifyInstance } from 'fastify';

/**
 * `GET /healthz`: the process is up and serving. `GET /readyz`: it can take
 * traffic (at least one provider configured, not shutting down).
 */
export function registerHealthRoutes(app: FastifyInstance, isReady: () => { ready: boolean; reason?: string }): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const state = isReady();
    if (state.ready) return { status: 'ready' };
    return reply.code(503).send({ status: 'not_ready', reason: state.reason ?? null });
  });
}
