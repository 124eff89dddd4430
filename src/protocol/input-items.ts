import { z } from 'zod';
import { jsonArgumentsText, jsonSchemaObject } from './bounded-fields.ts';
import { HostedCallInputItem } from './hosted-tools.ts';
import { REQUEST_LIMITS } from './request-limits.ts';
import { refusedUnless } from './unsupported-field.ts';

/**
 * Input items of `CreateResponseBody.input`, as the OpenResponses schema
 * (`ItemParam`) defines them, with every field OpenAI's own types define on
 * them (openai-node, `resources/responses/responses.d.ts`). Objects are strict,
 * as OpenAI's API is: a key nobody defines is a 400 naming it
 * (`input[0].content[1].foo`), never a silent drop. Fields that only say where
 * an item came from (`caller`, `created_by`, `async` on a call) are accepted;
 * fields asking for what the gateway lacks (a Files API id) are refused.
 *
 * One deliberate superset: an item without `type` that has a `role` is read as
 * a message (OpenAI's "easy input message", which every SDK user writes);
 * without `role` it is an `item_reference`, as the schema says.
 */

const MAX_TEXT = REQUEST_LIMITS.maxTextChars;
const nullableString = z.string().max(REQUEST_LIMITS.maxUrlChars).nullish();

/** A file uploaded to OpenAI's Files API, named by id: there is no such store here to read it from. */
const fileId = (sendInstead: string) =>
  refusedUnless(z.string().max(REQUEST_LIMITS.maxIdChars).nullish(), () => false, `this gateway has no Files API to read a file id from; send ${sendInstead} instead`);

/** OpenAI's explicit prompt-cache breakpoint on a part: the cache may end here (the AI SDK sends it when asked to). */
const PromptCacheBreakpoint = z.strictObject({ mode: z.literal('explicit'), ttl: z.enum(['30m', '12h']).nullish() });

export const InputTextPart = z.strictObject({ type: z.literal('input_text'), text: z.string().max(MAX_TEXT), prompt_cache_breakpoint: PromptCacheBreakpoint.nullish() });
export const InputImagePart = z.strictObject({
  type: z.literal('input_image'),
  image_url: z.string().max(REQUEST_LIMITS.maxImageChars).nullish(),
  file_id: fileId('the image as image_url (a URL or a data URL)'),
  // `original`: the image as it is, without the downscaling `high` allows; upstreams with no such level get `high`.
  detail: z.enum(['low', 'high', 'auto', 'original']).nullish(),
  prompt_cache_breakpoint: PromptCacheBreakpoint.nullish(),
});
export const InputFilePart = z.strictObject({
  type: z.literal('input_file'),
  filename: nullableString,
  file_data: z.string().max(REQUEST_LIMITS.maxFileChars).nullish(),
  file_url: nullableString,
  file_id: fileId('the file as file_data (a data URL) or file_url'),
  // How finely a Responses upstream renders the file (a PDF's pages); other upstreams have no such setting.
  detail: z.enum(['auto', 'low', 'high']).nullish(),
  prompt_cache_breakpoint: PromptCacheBreakpoint.nullish(),
});
export const InputVideoPart = z.strictObject({ type: z.literal('input_video'), video_url: z.string().max(REQUEST_LIMITS.maxImageChars) });
export const OutputTextPart = z.strictObject({
  type: z.literal('output_text'),
  text: z.string().max(MAX_TEXT),
  // OpenAI's annotation kinds (web search citations, file citations, file paths), kept as sent.
  annotations: z.array(z.object({ type: z.enum(['url_citation', 'file_citation', 'container_file_citation', 'file_path']) }).loose()).max(REQUEST_LIMITS.maxContentParts).optional(),
  // The token log-probabilities a response carried (`include: message.output_text.logprobs`), resent with it; the model is not shown them.
  logprobs: z.array(z.object({ token: z.string() }).loose()).max(MAX_TEXT).nullish(), // a token is at least a character of the text
});
export const RefusalPart = z.strictObject({ type: z.literal('refusal'), refusal: z.string().max(MAX_TEXT) });

const UserContentPart = z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart]);
const AssistantContentPart = z.discriminatedUnion('type', [OutputTextPart, RefusalPart]);
const messageText = z.string().max(MAX_TEXT);
const itemId = z.string().max(REQUEST_LIMITS.maxIdChars).nullish();
const itemStatus = nullableString;

export const UserMessageItem = z.strictObject({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('user'),
  content: z.union([messageText, z.array(UserContentPart).max(REQUEST_LIMITS.maxContentParts)]),
  status: itemStatus,
});
export const SystemMessageItem = z.strictObject({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('system'),
  content: z.union([messageText, z.array(InputTextPart).max(REQUEST_LIMITS.maxContentParts)]),
  status: itemStatus,
});
export const DeveloperMessageItem = SystemMessageItem.extend({ role: z.literal('developer') });
export const AssistantMessageItem = z.strictObject({
  id: itemId,
  type: z.literal('message'),
  role: z.literal('assistant'),
  content: z.union([messageText, z.array(AssistantContentPart).max(REQUEST_LIMITS.maxContentParts)]),
  // null (openai-node types it nullable) is no phase.
  phase: z.enum(['commentary', 'final_answer']).nullish(),
  status: itemStatus,
});
const MessageItem = z.discriminatedUnion('role', [UserMessageItem, SystemMessageItem, DeveloperMessageItem, AssistantMessageItem]);

const callId = z.string().min(1).max(64);
export const ToolName = z.string().min(1).max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$');
const callStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullish();
/** Who made a call (`{type: "direct"}`, or a program in OpenAI's programmatic tool calling), as OpenAI reports it on items a client resends. */
const caller = z.object({ type: z.string().max(REQUEST_LIMITS.maxIdChars) }).loose().nullish();
/** Whether a call's output may come in a later response: OpenAI reports it on the calls of `async` tools. */
const asyncCall = z.boolean().nullish();
/** Who created an item, as OpenAI's item listings show it. */
const createdBy = z.string().max(REQUEST_LIMITS.maxIdChars).nullish();

export const FunctionCallItem = z.strictObject({
  id: itemId,
  type: z.literal('function_call'),
  call_id: callId,
  name: ToolName,
  arguments: jsonArgumentsText,
  /** The namespace tool the function belongs to, as OpenAI shows namespaced calls. */
  namespace: ToolName.nullish(),
  async: asyncCall,
  caller,
  created_by: createdBy,
  status: callStatus,
});
export const FunctionCallOutputItem = z.strictObject({
  id: itemId,
  type: z.literal('function_call_output'),
  call_id: callId,
  // The call's name and namespace, as OpenAI lets a client repeat them: the call is found by `call_id`.
  name: ToolName.nullish(),
  namespace: ToolName.nullish(),
  caller,
  created_by: createdBy,
  output: z.union([
    z.string().max(MAX_TEXT),
    z.array(z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart, InputVideoPart])).max(REQUEST_LIMITS.maxContentParts),
  ]),
  status: callStatus,
});
/** A freeform tool call as OpenAI shows it, resent by the client. */
export const CustomToolCallItem = z.strictObject({
  id: itemId,
  type: z.literal('custom_tool_call'),
  call_id: callId,
  name: ToolName,
  input: z.string().max(MAX_TEXT),
  namespace: ToolName.nullish(),
  async: asyncCall,
  caller,
  created_by: createdBy,
  status: callStatus,
});
export const CustomToolCallOutputItem = z.strictObject({
  id: itemId,
  type: z.literal('custom_tool_call_output'),
  call_id: callId,
  caller,
  created_by: createdBy,
  output: z.union([z.string().max(MAX_TEXT), z.array(z.discriminatedUnion('type', [InputTextPart, InputImagePart, InputFilePart])).max(REQUEST_LIMITS.maxContentParts)]),
  status: callStatus,
});

/** A tool search the model asked the client to run, resent. */
export const ToolSearchCallItem = z.strictObject({
  id: itemId,
  type: z.literal('tool_search_call'),
  call_id: callId.nullish(),
  arguments: z.unknown(),
  execution: z.enum(['server', 'client']).nullish(),
  created_by: createdBy,
  status: callStatus,
});
/** What the client's tool search loaded: tools offered to the model from then on (their shapes are checked when offered). */
export const ToolSearchOutputItem = z.strictObject({
  id: itemId,
  type: z.literal('tool_search_output'),
  call_id: callId.nullish(),
  tools: z.array(z.object({ type: z.string() }).loose()).max(REQUEST_LIMITS.maxTools),
  execution: z.enum(['server', 'client']).nullish(),
  created_by: createdBy,
  status: callStatus,
});

export const ReasoningItem = z.strictObject({
  id: itemId,
  type: z.literal('reasoning'),
  summary: z.array(z.strictObject({ type: z.literal('summary_text'), text: z.string().max(MAX_TEXT) })).max(REQUEST_LIMITS.maxContentParts),
  // The reasoning text a response carried (the gateway's own output, resent by stateless clients).
  content: z.array(z.strictObject({ type: z.literal('reasoning_text'), text: z.string().max(MAX_TEXT) })).max(REQUEST_LIMITS.maxContentParts).nullish(),
  // Another provider's (or OpenAI's) encrypted reasoning is accepted; each provider uses what it can read.
  encrypted_content: z.string().max(MAX_TEXT).nullish(),
  status: callStatus,
});
export const CompactionItem = z.strictObject({
  id: itemId,
  type: z.literal('compaction'),
  encrypted_content: z.string().max(MAX_TEXT),
  created_by: createdBy,
});
/** "Compact the context so far" (OpenAI's; Codex's remote compaction): the last input item; the response's one output item is the window sealed as a compaction item. */
export const CompactionTriggerItem = z.strictObject({ id: itemId, type: z.literal('compaction_trigger') });
export const ItemReference = z.strictObject({ type: z.literal('item_reference'), id: z.string().max(REQUEST_LIMITS.maxIdChars) });

/** The client's answer to an `mcp_approval_request` (OpenAI's MCP shape). */
export const McpApprovalResponseItem = z.strictObject({
  id: itemId,
  type: z.literal('mcp_approval_response'),
  approval_request_id: z.string().min(1).max(REQUEST_LIMITS.maxIdChars),
  approve: z.boolean(),
  reason: z.string().max(MAX_TEXT).nullish(),
});
// MCP items the gateway itself returned, resent by stateless clients (names and labels as MCP servers and OpenAI spell them).
const mcpId = z.string().max(REQUEST_LIMITS.maxIdChars);
// Their own id may be left out, as for every other item: the Agents SDK's conversation session strips every id but reasoning's before adding items.
const mcpItemId = mcpId.nullish();
const mcpName = z.string().max(REQUEST_LIMITS.maxIdChars);
const McpListToolsInput = z.strictObject({
  id: mcpItemId,
  type: z.literal('mcp_list_tools'),
  server_label: mcpName,
  tools: z
    .array(
      z.strictObject({
        name: mcpName,
        description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
        input_schema: jsonSchemaObject,
        annotations: z.record(z.string(), z.unknown()).nullish(),
      }),
    )
    .max(REQUEST_LIMITS.maxTools),
  error: z.string().max(MAX_TEXT).nullish(),
});
/**
 * An MCP call's error as OpenAI's newer types give it (`McpToolCallError`: a
 * protocol, execution or HTTP error), read as the text the gateway's own
 * items carry.
 */
const McpToolCallError = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.enum(['mcp_protocol_error', 'http_error']), code: z.number(), message: z.string().max(MAX_TEXT) }),
    z.strictObject({ type: z.literal('mcp_tool_execution_error'), content: z.unknown() }),
  ])
  .transform((error) => (error.type === 'mcp_tool_execution_error' ? (typeof error.content === 'string' ? error.content : JSON.stringify(error.content ?? null)) : `${error.message} (${error.type === 'http_error' ? 'HTTP' : 'code'} ${error.code})`));
const McpCallInput = z.strictObject({
  id: mcpItemId,
  type: z.literal('mcp_call'),
  server_label: mcpName,
  name: mcpName,
  arguments: jsonArgumentsText,
  output: z.string().max(MAX_TEXT).nullish(),
  error: z.union([z.string().max(MAX_TEXT), McpToolCallError]).nullish(),
  // OpenAI's MCP calls also say `calling` and `failed`.
  status: z.enum(['in_progress', 'completed', 'incomplete', 'calling', 'failed']).nullish(),
  approval_request_id: mcpId.nullish(),
  // The images the tool answered with, as the gateway's own mcp_call items carry them (output-items.ts).
  'loopgate:images': z.array(z.strictObject({ type: z.literal('input_image'), image_url: z.string().max(REQUEST_LIMITS.maxImageChars) })).max(REQUEST_LIMITS.maxContentParts).nullish(),
});
const McpApprovalRequestInput = z.strictObject({ id: mcpItemId, type: z.literal('mcp_approval_request'), server_label: mcpName, name: mcpName, arguments: jsonArgumentsText });

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
  CompactionTriggerItem,
  ItemReference,
  McpApprovalResponseItem,
  McpListToolsInput,
  McpCallInput,
  McpApprovalRequestInput,
  HostedCallInputItem,
]);

/**
 * Codex's own bookkeeping on the items it sends (turn ids, content kinds),
 * which OpenAI takes and ignores: read past, never sent upstream (some
 * upstreams refuse it).
 */
const CLIENT_BOOKKEEPING = 'internal_chat_message_metadata_passthrough';

export const InputItem = z.preprocess((value) => {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    let record = value as Record<string, unknown>;
    if (CLIENT_BOOKKEEPING in record) {
      const { [CLIENT_BOOKKEEPING]: _bookkeeping, ...rest } = record;
      record = rest;
    }
    if (record.type === undefined || record.type === null) return { ...record, type: 'role' in record ? 'message' : 'item_reference' };
    return record;
  }
  return value;
}, ItemUnion);

export type InputItem = z.infer<typeof ItemUnion>;
export type HostedCallInputItem = z.infer<typeof HostedCallInputItem>;
export type MessageInputItem = z.infer<typeof MessageItem>;
export type UserContentPart = z.infer<typeof UserContentPart>;
export type OutputTextAnnotations = z.infer<typeof OutputTextPart>['annotations'];
export type FunctionCallOutputPart = Exclude<z.infer<typeof FunctionCallOutputItem>['output'], string>[number];
