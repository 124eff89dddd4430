import type { FastifyInstance } from 'fastify';
import { buildInfo, VERSION } from '../../build-info.ts';
import { gatewayOpenApi, type GatewaySurface } from '../openapi-document.ts';

/**
 * `GET /version` (version, build, Node) and `GET /openapi.json` (the whole
 * surface: the OpenResponses schema merged with loopgate's additions, built
 * on first request and then served from memory). Neither needs an API key:
 * both describe the software, not anyone's data.
 */
export function registerDiscoveryRoutes(app: FastifyInstance, surface: Omit<GatewaySurface, 'version'>): void {
  app.get('/version', async () => buildInfo());
  let document: string | null = null;
  app.get('/openapi.json', async (_request, reply) => {
    document ??= JSON.stringify(gatewayOpenApi({ ...surface, version: VERSION }));
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
