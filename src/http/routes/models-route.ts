import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors/gateway-error.ts';
import type { ModelRouter } from '../../providers/model-router.ts';

/** How long the upstreams' model lists may take before the answer goes without them. */
const LIST_TIMEOUT_MS = 5_000;

interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * `GET /v1/models` in the OpenAI list shape, and `GET /v1/models/{model}`
 * (the OpenAI SDK's `models.retrieve`): one of those listed, or a 404.
 */
export function registerModelsRoute(app: FastifyInstance, router: ModelRouter, defaultModel: string | null): void {
  app.get('/v1/models', async (request) => {
    const data = await listed(router, defaultModel);
    request.log.debug('models listed');
    return { object: 'list', data };
  });
  // A wildcard, not a parameter: model names hold slashes (`anthropic/claude-…`, `meta-llama/Llama-3-8B`), sent raw or as %2F.
  app.get<{ Params: { '*': string } }>('/v1/models/*', async (request) => {
    const id = request.params['*'];
    const model = (await listed(router, defaultModel)).find((candidate) => candidate.id === id);
    if (!model) throw notFound(`The model '${id}' is not among the models this gateway lists (GET /v1/models).`, 'model_not_found', 'model');
    return model;
  });
}

/** The configured aliases, the default model and what the upstreams list, each once. */
async function listed(router: ModelRouter, defaultModel: string | null): Promise<ModelObject[]> {
  const signal = AbortSignal.timeout(LIST_TIMEOUT_MS);
  const models = await router.listModels(signal);
  if (defaultModel && !models.some((model) => model.id === defaultModel)) models.unshift({ id: defaultModel, owned_by: 'loopgate' });
  return models.map((model) => ({ id: model.id, object: 'model', created: 0, owned_by: model.owned_by }));
}
