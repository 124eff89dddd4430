import type { ModelInfo } from './provider.ts';

/** The `GET /models` list of OpenAI's APIs (Chat Completions and Responses servers share it); entries without an id are passed over. */
export function readOpenAIModelList(body: unknown, provider: string): ModelInfo[] {
  const data = (body as { data?: { id?: unknown; owned_by?: unknown }[] }).data ?? [];
  return data
    .filter((model): model is { id: string; owned_by?: unknown } => typeof model.id === 'string')
    .map((model) => ({ id: model.id, owned_by: typeof model.owned_by === 'string' ? model.owned_by : provider }));
}
