import { z } from 'zod';
import { PromptCacheOptionsParam, ServiceTierParam } from './create-response-request.ts';
import { InputItem } from './input-items.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

/**
 * `CompactResponseMethodPublicBody` of the OpenResponses schema, as zod: the
 * body of `POST /v1/responses/compact`. `model` is required (no configured
 * default applies: the schema requires it). Besides the schema's fields, what
 * openai-node sends and the create route also takes: `service_tier` (passed
 * on), `prompt_cache_retention` and `prompt_cache_options` (honoured as on
 * create: the summarising call is a model call like any other), and
 * `image`, which is refused as on create.
 */
export const CompactRequest = z
  .object({
    model: z.string().min(1).max(REQUEST_LIMITS.maxIdChars),
    input: z.union([z.string().max(REQUEST_LIMITS.maxTextChars), z.array(InputItem).max(REQUEST_LIMITS.maxInputItems)]).nullish(),
    previous_response_id: z.string().max(REQUEST_LIMITS.maxIdChars).nullish(),
    instructions: z.string().max(REQUEST_LIMITS.maxTextChars).nullish(),
    prompt_cache_key: z.string().max(64).nullish(),
    service_tier: ServiceTierParam.nullish(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
    prompt_cache_options: PromptCacheOptionsParam.nullish(),
    image: z.unknown().optional(),
  })
  .strict();

export type CompactRequest = z.infer<typeof CompactRequest>;
