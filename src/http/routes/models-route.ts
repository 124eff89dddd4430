import type { FastifyInstance } from 'fastify';
import type { ModelRouter } from '../../providers/model-router.ts';

/** `GET /v1/models` in the OpenAI list shape. */
export function registerModelsRoute(app: FastifyInstance, router: ModelRouter, defaultModel: string | null): void {
  app.get('/v1/models', async (request) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5_000);
    try {
      const models = await router.listModels(controller.signal);
      if (defaultModel && !models.some((model) => model.id === defaultModel)) models.unshift({ id: defaultModel, owned_by: 'loopgate' });
      return { object: 'list', data: models.map((model) => ({ id: model.id, object: 'model', created: 0, owned_by: model.owned_by })) };
    } finally {
      clearTimeout(timer);
      request.log.debug('models listed');
    }
  });
}
