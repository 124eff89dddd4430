import { z } from 'zod';
import { REQUEST_LIMITS } from './request-limits.ts';

/**
 * Hosted tools an OpenAI Responses upstream runs on its own servers, and the
 * items it reports their calls in. A provider that runs them is offered them
 * (config `providers.<name>.hostedTools`); every other hosted tool follows
 * `loop.hostedTools` (omitted or refused).
 *
 * Each tool is checked for the fields OpenAI's types define (openai-node,
 * `resources/responses/responses.d.ts`, `Tool`); fields beyond those are kept
 * and sent upstream verbatim, never dropped.
 */
export const UPSTREAM_HOSTED_TOOL_TYPES = [
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
] as const;
export type UpstreamHostedToolType = (typeof UPSTREAM_HOSTED_TOOL_TYPES)[number];

/** The hosted tools `tool_choice` can name (OpenAI's `ToolChoiceTypes`) among those an upstream may run. */
export const HOSTED_TOOL_CHOICE_TYPES = ['file_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'image_generation', 'code_interpreter'] as const satisfies readonly UpstreamHostedToolType[];

const shortText = z.string().max(REQUEST_LIMITS.maxIdChars);
const searchContextSize = z.enum(['low', 'medium', 'high']).nullish();
const approximateLocation = z
  .object({ type: z.literal('approximate').optional(), city: shortText.nullish(), country: shortText.nullish(), region: shortText.nullish(), timezone: shortText.nullish() })
  .loose()
  .nullish();
const idList = z.array(shortText).max(REQUEST_LIMITS.maxTools);

export const WebSearchToolParam = z
  .object({
    type: z.enum(['web_search', 'web_search_2025_08_26']),
    filters: z.object({ allowed_domains: idList.nullish() }).loose().nullish(),
    search_context_size: searchContextSize,
    user_location: approximateLocation,
  })
  .loose();

export const WebSearchPreviewToolParam = z
  .object({ type: z.enum(['web_search_preview', 'web_search_preview_2025_03_11']), search_context_size: searchContextSize, user_location: approximateLocation })
  .loose();

export const FileSearchToolParam = z
  .object({
    type: z.literal('file_search'),
    vector_store_ids: idList,
    max_num_results: z.int().min(1).max(50).optional(),
    filters: z.object({ type: z.string() }).loose().nullish(),
    ranking_options: z.object({}).loose().optional(),
  })
  .loose();

export const CodeInterpreterToolParam = z
  .object({
    type: z.literal('code_interpreter'),
    container: z.union([shortText, z.object({ type: z.literal('auto'), file_ids: idList.optional() }).loose()]),
  })
  .loose();

export const ImageGenerationToolParam = z
  .object({
    type: z.literal('image_generation'),
    background: z.enum(['transparent', 'opaque', 'auto']).optional(),
    input_fidelity: z.enum(['high', 'low']).nullish(),
    model: shortText.optional(),
    moderation: z.enum(['auto', 'low']).optional(),
    output_compression: z.int().min(0).max(100).optional(),
    output_format: z.enum(['png', 'webp', 'jpeg']).optional(),
    partial_images: z.int().min(0).max(3).optional(),
    quality: z.enum(['low', 'medium', 'high', 'auto']).optional(),
    size: shortText.optional(),
  })
  .loose();

/** A hosted tool an upstream may run, as the client named it. */
export const UpstreamHostedToolParam = z.discriminatedUnion('type', [WebSearchToolParam, WebSearchPreviewToolParam, FileSearchToolParam, CodeInterpreterToolParam, ImageGenerationToolParam]);
export type UpstreamHostedToolParam = z.infer<typeof UpstreamHostedToolParam>;

export function isUpstreamHostedToolType(type: string): type is UpstreamHostedToolType {
  return (UPSTREAM_HOSTED_TOOL_TYPES as readonly string[]).includes(type);
}

/** The items an upstream reports its hosted tools' calls in. */
export const HOSTED_CALL_ITEM_TYPES = ['web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call'] as const;
export type HostedCallItemType = (typeof HOSTED_CALL_ITEM_TYPES)[number];

export function isHostedCallItemType(type: unknown): type is HostedCallItemType {
  return typeof type === 'string' && (HOSTED_CALL_ITEM_TYPES as readonly string[]).includes(type);
}

/**
 * A hosted tool call as the upstream reported it, resent by a client (or read
 * back from the store). Opaque to the gateway: kept whole, every field, and
 * given back to a Responses upstream as it came.
 */
export const HostedCallInputItem = z
  .object({
    type: z.enum(HOSTED_CALL_ITEM_TYPES),
    id: z.string().min(1).max(REQUEST_LIMITS.maxIdChars),
    status: z.string().max(REQUEST_LIMITS.maxIdChars).optional(),
  })
  .loose();

/**
 * The progress events of hosted calls, as OpenAI names them: `response.<item
 * type>.<phase>` (`response.web_search_call.searching`, …), and a code
 * interpreter's code as `response.code_interpreter_call_code.delta`/`.done`.
 */
export const HOSTED_PROGRESS_EVENT = /^response\.(web_search_call|file_search_call|code_interpreter_call|code_interpreter_call_code|image_generation_call)\.[a-z_]+$/;

/** Include values that ask an upstream for more of its hosted calls (their results, sources, outputs). */
export const HOSTED_INCLUDES = /^(web_search_call|file_search_call|code_interpreter_call)\./;
