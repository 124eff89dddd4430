import { z } from 'zod';
import { jsonArgumentsText, jsonSchemaObject } from './bounded-fields.ts';
import { HostedCallInputItem } from './hosted-tools.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

/**
 * Input items of `CreateResponseBody.input`, as the OpenResponses schema
 * (`ItemParam`) defines them. Objects are not strict: the schema does not
 * forbid extra properties, and SDKs add fields over time.
 *
 * One deliberate superset: an item without `type` that has a `role` is read as
 * a message (OpenAI's "easy input message", which every SDK user writes);
 * without `role` it is an `item_reference`, as the schema says.
 */

const MAX_TEXT = REQUEST_LIMITS.maxTextChars;
const nullableString = z.string().max(REQUEST_LIMITS.maxUrlChars).nullish();

/** OpenAI's explicit prompt-cache breakpoint on a part: the cache may end here (the AI SDK sends it when asked to). */
const PromptCacheBreakpoint = z.object({ mode: z.literal('explicit'), ttl: z.enum(['30m', '12h']).nullish() });

export const InputTextPart = z.object({ type: z.literal('input_text'), text: z.string().max(MAX_TEXT), prompt_cache_breakpoint: PromptCacheBreakpoint.nullish() });
export const InputImagePart = z.object({
  type: z.literal('input_image'),
  image_url: z.string().max(REQUEST_LIMITS.maxImageChars).nullish(),
  detail: z.enum(['low', 'high', 'auto']).nullish(),
  prompt_cache_breakpoint: PromptCacheBreakpoint.nullish(),
});
export const InputFilePart = z.object({
  type: z.literal('input_file'),
  filename: nullableString,
  file_data: z.string().max(REQUEST_LIMITS.maxFileChars).nullish(),
  file_url: nullableString,
  prompt_cache_breakpoint: PromptCacheBreakpoint.nullish(),
});
export const InputVideoPart = z.object({ type: z.literal('input_video'), video_url: z.string().max(REQUEST_LIMITS.maxImageChars) });
export const OutputTextPart = z.object({
  type: z.literal('output_text'),
  text: z.string().max(MAX_TEXT),
  // OpenAI's annotation kinds (web search citations, file citations, file paths), kept as sent.
  annotations: z.array(z.object({ type: z.enum(['url_citation', 'file_citation', 'container_file_citation', 'file_path']) }).loose()).max(REQUEST_LIMITS.maxContentParts).optional(),
});
export const RefusalPart = z.object({ type: z.literal('refusal'), refusal: z.string().max(MAX_TEXT) });

const UserContentPart = z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart]);
const AssistantContentPart = z.discriminatedUnion('type', [OutputTextPart, RefusalPart]);
const messageText = z.string().max(MAX_TEXT);
const itemId = z.string().max(REQUEST_LIMITS.maxIdChars).nullish();
const itemStatus = nullableString;

export const UserMessageItem = z.object({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('user'),
  content: z.union([messageText, z.array(UserContentPart).max(REQUEST_LIMITS.maxContentParts)]),
  status: itemStatus,
});
export const SystemMessageItem = z.object({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('system'),
  content: z.union([messageText, z.array(InputTextPart).max(REQUEST_LIMITS.maxContentParts)]),
  status: itemStatus,
});
export const DeveloperMessageItem = SystemMessageItem.extend({ role: z.literal('developer') });
export const AssistantMessageItem = z.object({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('assistant'),
  content: z.union([messageText, z.array(AssistantContentPart).max(REQUEST_LIMITS.maxContentParts)]),
  phase: z.enum(['commentary', 'final_answer']).optional(),
  status: itemStatus,
});
const MessageItem = z.discriminatedUnion('role', [UserMessageItem, SystemMessageItem, DeveloperMessageItem, AssistantMessageItem]);

const callId = z.string().min(1).max(64);
export const ToolName = z.string().min(1).max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$');
const callStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullish();

export const FunctionCallItem = z.object({
  id: itemId,
  type: z.literal('function_call'),
  call_id: callId,
  name: ToolName,
  arguments: jsonArgumentsText,
  /** The namespace tool the function belongs to, as OpenAI shows namespaced calls. */
  namespace: ToolName.nullish(),
  status: callStatus,
});
export const FunctionCallOutputItem = z.object({
  id: itemId,
  type: z.literal('function_call_output'),
  call_id: callId,
  output: z.union([
    z.string().max(MAX_TEXT),
    z.array(z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart, InputVideoPart])).max(REQUEST_LIMITS.maxContentParts),
  ]),
  status: callStatus,
});
/** A freeform tool call as OpenAI shows it, resent by the client. */
export const CustomToolCallItem = z.object({
  id: itemId,
  type: z.literal('custom_tool_call'),
  call_id: callId,
  name: ToolName,
  input: z.string().max(MAX_TEXT),
  namespace: ToolName.nullish(),
  status: callStatus,
});
export const CustomToolCallOutputItem = z.object({
  id: itemId,
  type: z.literal('custom_tool_call_output'),
  call_id: callId,
  output: z.union([z.string().max(MAX_TEXT), z.array(z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart])).max(REQUEST_LIMITS.maxContentParts)]),
  status: callStatus,
});

/** A tool search the model asked the client to run, resent. */
export const ToolSearchCallItem = z.object({
  id: itemId,
  type: z.literal('tool_search_call'),
  call_id: callId.nullish(),
  arguments: z.unknown(),
  execution: z.enum(['server', 'client']).nullish(),
  status: callStatus,
});
/** What the client's tool search loaded: tools offered to the model from then on (their shapes are checked when offered). */
export const ToolSearchOutputItem = z.object({
  id: itemId,
  type: z.literal('tool_search_output'),
  call_id: callId.nullish(),
  tools: z.array(z.object({ type: z.string() }).loose()).max(REQUEST_LIMITS.maxTools),
  execution: z.enum(['server', 'client']).nullish(),
  status: callStatus,
});

export const ReasoningItem = z.object({
  id: itemId,
  type: z.literal('reasoning'),
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string().max(MAX_TEXT) })).max(REQUEST_LIMITS.maxContentParts),
  // The reasoning text a response carried (the gateway's own output, resent by stateless clients).
  content: z.array(z.object({ type: z.literal('reasoning_text'), text: z.string().max(MAX_TEXT) })).max(REQUEST_LIMITS.maxContentParts).nullish(),
  // Another provider's (or OpenAI's) encrypted reasoning is accepted; each provider uses what it can read.
  encrypted_content: z.string().max(MAX_TEXT).nullish(),
  status: callStatus,
});
export const CompactionItem = z.object({
  id: itemId,
  type: z.literal('compaction'),
  encrypted_content: z.string().max(MAX_TEXT),
});
export const ItemReference = z.object({ type: z.literal('item_reference'), id: z.string().max(REQUEST_LIMITS.maxIdChars) });

/** The client's answer to an `mcp_approval_request` (OpenAI's MCP shape). */
export const McpApprovalResponseItem = z.object({
  id: itemId,
  type: z.literal('mcp_approval_response'),
  approval_request_id: z.string().min(1).max(REQUEST_LIMITS.maxIdChars),
  approve: z.boolean(),
  reason: z.string().max(MAX_TEXT).nullish(),
});
// MCP items the gateway itself returned, resent by stateless clients (names and labels as MCP servers and OpenAI spell them).
const mcpId = z.string().max(REQUEST_LIMITS.maxIdChars);
const mcpName = z.string().max(REQUEST_LIMITS.maxIdChars);
const McpListToolsInput = z.object({
  id: mcpId,
  type: z.literal('mcp_list_tools'),
  server_label: mcpName,
  tools: z
    .array(
      z.object({
        name: mcpName,
        description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
        input_schema: jsonSchemaObject,
        annotations: z.record(z.string(), z.unknown()).nullish(),
      }),
    )
    .max(REQUEST_LIMITS.maxTools),
  error: z.string().max(MAX_TEXT).nullish(),
});
const McpCallInput = z.object({
  id: mcpId,
  type: z.literal('mcp_call'),
  server_label: mcpName,
  name: mcpName,
  arguments: jsonArgumentsText,
  output: z.string().max(MAX_TEXT).nullish(),
  error: z.string().max(MAX_TEXT).nullish(),
  status: callStatus,
  approval_request_id: mcpId.nullish(),
});
const McpApprovalRequestInput = z.object({ id: mcpId, type: z.literal('mcp_approval_request'), server_label: mcpName, name: mcpName, arguments: jsonArgumentsText });

const ItemUnion = z.discriminatedUnion('type', [
  MessageItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  CustomToolCallItem,
  CustomToolCallOutputItem,
  ToolSearchCallItem,
  ToolSearchOutputItem,
  ReasoningItem,
  CompactionItem,
  ItemReference,
  McpApprovalResponseItem,
  McpListToolsInput,
  McpCallInput,
  McpApprovalRequestInput,
  HostedCallInputItem,
]);

export const InputItem = z.preprocess((value) => {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (record.type === undefined || record.type === null) {
      return { ...record, type: 'role' in record ? 'message' : 'item_reference' };
    }
  }
  return value;
}, ItemUnion);

export type InputItem = z.infer<typeof ItemUnion>;
export type HostedCallInputItem = z.infer<typeof HostedCallInputItem>;
export type MessageInputItem = z.infer<typeof MessageItem>;
export type UserContentPart = z.infer<typeof UserContentPart>;
export type FunctionCallOutputPart = Exclude<z.infer<typeof FunctionCallOutputItem>['output'], string>[number];
