import { z } from 'zod';
import { InputItem, ToolName } from './input-items.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

/**
 * `CreateResponseBody` of the OpenResponses schema, as zod. It accepts what the
 * schema accepts, plus two things every OpenAI SDK user sends and the OpenAI
 * API takes: `text.format` of type `json_object`, and reasoning effort `minimal`.
 */

export const FunctionToolParam = z.object({
  type: z.literal('function'),
  name: ToolName,
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().optional(),
});

/** A remote MCP server named in the request (OpenAI-compatible). */
export const McpToolParam = z.object({
  type: z.literal('mcp'),
  server_label: z.string().min(1).max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$'),
  server_url: z.string().min(1).max(REQUEST_LIMITS.maxUrlChars),
  server_description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  headers: z.record(z.string(), z.string()).nullish(),
  allowed_tools: z.union([z.array(z.string()), z.object({ tool_names: z.array(z.string()).optional() })]).nullish(),
  require_approval: z
    .union([
      z.enum(['always', 'never']),
      z.object({ always: z.object({ tool_names: z.array(z.string()).optional() }).optional(), never: z.object({ tool_names: z.array(z.string()).optional() }).optional() }),
    ])
    .nullish(),
});

const SpecificFunction = z.object({ type: z.literal('function'), name: z.string() });
const ToolChoiceMode = z.enum(['none', 'auto', 'required']);
const AllowedTools = z.object({
  type: z.literal('allowed_tools'),
  tools: z.array(SpecificFunction).min(1).max(128),
  mode: ToolChoiceMode.optional(),
});
export const ToolChoiceParam = z.union([ToolChoiceMode, z.discriminatedUnion('type', [SpecificFunction, AllowedTools])]);

const JsonSchemaFormat = z.object({
  type: z.literal('json_schema'),
  name: z.string().max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$').optional(),
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});
export const TextFormatParam = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  JsonSchemaFormat,
]);

const Metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, 'at most 16 key-value pairs');

export const CreateResponseRequest = z.object({
  model: z.string().min(1).max(REQUEST_LIMITS.maxIdChars).nullish(),
  input: z.union([z.string().max(REQUEST_LIMITS.maxTextChars), z.array(InputItem).max(REQUEST_LIMITS.maxInputItems)]).nullish(),
  previous_response_id: z.string().max(REQUEST_LIMITS.maxIdChars).nullish(),
  include: z.array(z.enum(['reasoning.encrypted_content', 'message.output_text.logprobs'])).optional(),
  tools: z.array(z.discriminatedUnion('type', [FunctionToolParam, McpToolParam])).max(REQUEST_LIMITS.maxTools).nullish(),
  tool_choice: ToolChoiceParam.nullish(),
  metadata: Metadata.nullish(),
  text: z.object({ format: TextFormatParam.nullish(), verbosity: z.enum(['low', 'medium', 'high']).optional() }).nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  presence_penalty: z.number().nullish(),
  frequency_penalty: z.number().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).nullish(),
  background: z.boolean().optional(),
  max_output_tokens: z.int().min(16).nullish(),
  max_tool_calls: z.int().min(1).nullish(),
  reasoning: z
    .object({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
      summary: z.enum(['concise', 'detailed', 'auto']).nullish(),
    })
    .nullish(),
  safety_identifier: z.string().max(64).nullish(),
  prompt_cache_key: z.string().max(64).nullish(),
  truncation: z.enum(['auto', 'disabled']).optional(),
  instructions: z.string().max(REQUEST_LIMITS.maxTextChars).nullish(),
  store: z.boolean().optional(),
  service_tier: z.enum(['auto', 'default', 'flex', 'priority']).optional(),
  top_logprobs: z.int().min(0).max(20).nullish(),
});

export type CreateResponseRequest = z.infer<typeof CreateResponseRequest>;
export type FunctionToolParam = z.infer<typeof FunctionToolParam>;
export type McpToolParam = z.infer<typeof McpToolParam>;
export type ToolChoiceParam = z.infer<typeof ToolChoiceParam>;
export type TextFormatParam = z.infer<typeof TextFormatParam>;
