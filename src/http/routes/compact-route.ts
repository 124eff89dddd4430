import type { FastifyInstance } from 'fastify';
import type { Compactor } from '../../engine/compaction/compactor.ts';
import { CompactRequest } from '../../protocol/compact-request.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import { abortOnDisconnect } from '../abort-on-disconnect.ts';

/** `POST /v1/responses/compact`: the compacted window as JSON (`CompactResource`); failures in the error envelope, like `POST /v1/responses`. */
export function registerCompactRoute(app: FastifyInstance, compactor: Compactor): void {
  app.post('/v1/responses/compact', async (request, reply) => {
    const body = parseRequest(CompactRequest, request.body);
    const signal = abortOnDisconnect(reply);
    try {
      return await compactor.compact(body, { tenant: request.tenant, signal });
    } catch (error) {
      // The refusal's line (error-handler.ts) says whose request it was and for what.
      request.log = request.log.child({ tenant: request.tenant, model: body.model });
      throw error;
    }
  });
}
