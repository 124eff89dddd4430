import { isEngineOnlyItem } from '../engine-only-items.ts';
import { invalidRequest } from '../../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem, UserContentPart } from '../../protocol/input-items.ts';
import type { FunctionToolChoice, TextFormatParam } from '../../protocol/create-response-request.ts';
import { assertNever } from '../../util/assert-never.ts';
import type { TurnRequest } from '../provider.ts';
import type { ResponsesInputItem, ResponsesRequest } from './responses-wire.ts';
import { freeformInput } from '../../protocol/freeform-call.ts';
import { customToolOf, nativeFreeformNames } from './freeform-tools.ts';

export interface ResponsesRequestOptions {
  /** Whether the upstream keeps what it answers (`store`); off by default: the gateway's own store holds the conversation. */
  upstreamStore: boolean;
  /** Whether to ask for reasoning back as `encrypted_content`, so a stateless upstream can continue it. */
  encryptedReasoning: boolean;
  /** Whether freeform tools go as `custom` tools (OpenAI), or as the functions every upstream takes (freeform-tools.ts). */
  nativeCustomTools: boolean;
}

/**
 * Another provider's reasoning travels in `encrypted_content` with a
 * `<provider>.<kind>.v<n>:` prefix (anthropic/reasoning-blocks.ts); OpenAI's
 * own is an unprefixed token. Foreign values would make OpenAI reject the call.
 */
const FOREIGN_REASONING = /^[a-z][a-z0-9-]*\.[a-z_-]+\.v\d+:/;

/** Whether a reasoning item's `encrypted_content` is OpenAI's own, the kind this upstream is sent back. */
export function isOpenAIReasoning(encrypted: string | null | undefined): encrypted is string {
  return !!encrypted && !FOREIGN_REASONING.test(encrypted);
}

/**
 * Translates one turn into a Responses API request. The upstream is called
 * statelessly: the whole conversation goes in `input`, without item ids (ids
 * name items the upstream stored, and it stored none; hosted calls keep
 * theirs when it does, `upstreamStore`).
 */
export function convertToResponsesRequest(request: TurnRequest, options: ResponsesRequestOptions): ResponsesRequest {
  const freeform = nativeFreeformNames(request.tools, options.nativeCustomTools);
  const body: ResponsesRequest = {
    model: request.model,
    input: convertItems(request.items, request.historyLength, options.upstreamStore, freeform),
    stream: request.stream,
    store: options.upstreamStore,
  };
  if (request.instructions) body.instructions = request.instructions;
  const include: string[] = [];
  // Also when the upstream stores its answers: the gateway keeps its own ids for reasoning items, not the upstream's, so only the encrypted content can carry reasoning back.
  if (options.encryptedReasoning) include.push('reasoning.encrypted_content');
  if (request.logprobs) include.push('message.output_text.logprobs');
  include.push(...request.hostedInclude);
  if (include.length > 0) body.include = include;

  if (request.tools.length > 0 || request.hostedTools.length > 0) {
    body.tools = [
      ...request.tools.map((tool) => (tool.freeform && freeform.has(tool.name) ? customToolOf({ ...tool, freeform: tool.freeform }) : {
        type: 'function',
        name: tool.name,
        ...(tool.description != null && { description: tool.description }),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        strict: tool.strict ?? false,
        ...(tool.output_schema != null && { output_schema: tool.output_schema }),
      })),
      // The upstream runs these itself: sent as the client named them, every field.
      ...request.hostedTools,
    ];
    if (request.hostedToolChoice !== null) body.tool_choice = request.hostedToolChoice;
    else if (request.toolChoice !== null) body.tool_choice = convertToolChoice(request.toolChoice, freeform);
    if (request.parallelToolCalls !== null) body.parallel_tool_calls = request.parallelToolCalls;
  }

  const text: NonNullable<ResponsesRequest['text']> = {};
  const format = convertTextFormat(request.textFormat);
  if (format) text.format = format;
  if (request.verbosity !== null) text.verbosity = request.verbosity;
  if (Object.keys(text).length > 0) body.text = text;
  if (request.maxOutputTokens !== null) body.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.logprobs && request.topLogprobs) body.top_logprobs = request.topLogprobs;
  const reasoning = {
    ...(request.reasoningEffort !== null && { effort: request.reasoningEffort }),
    ...(request.reasoningSummary !== null && { summary: request.reasoningSummary }),
    ...(request.reasoningContext !== null && { context: request.reasoningContext }),
    ...(request.reasoningMode !== null && { mode: request.reasoningMode }),
  };
  if (Object.keys(reasoning).length > 0) body.reasoning = reasoning;
  if (request.safetyIdentifier !== null) body.safety_identifier = request.safetyIdentifier;
  if (request.promptCacheKey !== null) body.prompt_cache_key = request.promptCacheKey;
  // The client's cache settings, as OpenAI takes them (a diagnostics comparison names the gateway's ids, which the upstream never saw: left out).
  const { implicit, ttl, retention } = request.promptCache;
  if (!implicit || ttl !== null) body.prompt_cache_options = { ...(!implicit && { mode: 'explicit' }), ...(ttl !== null && { ttl }) };
  if (retention !== null) body.prompt_cache_retention = retention;
  if (request.serviceTier !== null) body.service_tier = request.serviceTier;
  // OpenAI truncates by itself too: its refusal names no token counts for the gateway's own truncation to learn a window from.
  if (request.truncation === 'auto') body.truncation = 'auto';
  // The upstream runs its hosted tools itself: the client's max_tool_calls bounds them there, less what the response already called.
  if (request.hostedToolCallBudget !== undefined && request.hostedTools.length > 0) body.max_tool_calls = request.hostedToolCallBudget;
  // presence_penalty and frequency_penalty have no Responses API counterpart and are left out.
  return body;
}

/** The fields of a request body that OpenAI's input token count takes; the rest (stream, store, include, sampling) it refuses. */
export function toInputTokensRequest(body: ResponsesRequest): Record<string, unknown> {
  const { model, input, instructions, tools, tool_choice, parallel_tool_calls, text, reasoning } = body;
  return Object.fromEntries(Object.entries({ model, input, instructions, tools, tool_choice, parallel_tool_calls, text, reasoning }).filter(([, value]) => value !== undefined));
}

function convertItems(items: InputItem[], historyLength: number, upstreamStore: boolean, freeform: ReadonlySet<string>): ResponsesInputItem[] {
  const converted: ResponsesInputItem[] = [];
  // Calls to freeform tools offered natively, whose outputs go back as custom_tool_call_output.
  const freeformCalls = new Set<string>();
  items.forEach((item, index) => {
    const param = index < historyLength ? 'previous_response_id' : `input[${index - historyLength}]`;
    if (isEngineOnlyItem(item, param)) return;
    switch (item.type) {
      case 'message':
        if (item.role === 'user') converted.push({ type: 'message', role: 'user', content: convertUserContent(item.content, `${param}.content`) });
        // An assistant message keeps its phase: OpenAI asks that it be sent back (a model that uses it does worse without).
        else if (item.role === 'assistant') converted.push({ type: 'message', role: 'assistant', content: convertAssistantContent(item.content), ...(item.phase && { phase: item.phase }) });
        else converted.push({ type: 'message', role: item.role, content: typeof item.content === 'string' ? item.content : item.content.map((part) => ({ type: 'input_text', text: part.text, ...breakpointOf(part) })) });
        return;
      case 'function_call':
        if (freeform.has(item.name)) {
          freeformCalls.add(item.call_id);
          converted.push({ type: 'custom_tool_call', call_id: item.call_id, name: item.name, input: freeformInput(item.arguments) });
        } else converted.push({ type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments });
        return;
      case 'function_call_output':
        converted.push({
          type: freeformCalls.has(item.call_id) ? 'custom_tool_call_output' : 'function_call_output',
          call_id: item.call_id,
          output: typeof item.output === 'string' ? item.output : item.output.map((part, partIndex) => convertUserPart(part, `${param}.output[${partIndex}]`)),
        });
        return;
      case 'web_search_call':
      case 'file_search_call':
      case 'code_interpreter_call':
      case 'image_generation_call': {
        // The upstream's own record of a hosted call it ran, given back whole. Its id names an item only an
        // upstream that stores kept: a stateless one refuses ids it never persisted (Codex leaves them out too).
        const { id, ...call } = item;
        converted.push(upstreamStore ? { ...call, id } : call);
        return;
      }
      case 'reasoning': {
        // Only OpenAI's own encrypted reasoning can go back; without it a stateless upstream has nothing to continue.
        const encrypted = item.encrypted_content;
        if (!isOpenAIReasoning(encrypted)) return;
        converted.push({ type: 'reasoning', summary: item.summary.map((part) => ({ type: 'summary_text', text: part.text })), encrypted_content: encrypted });
        return;
      }
      default:
        return assertNever(item);
    }
  });
  return converted;
}

function convertAssistantContent(content: Extract<InputItem, { role: 'assistant' }>['content']): unknown[] {
  if (typeof content === 'string') return [{ type: 'output_text', text: content, annotations: [] }];
  // Annotations (a web search's citations) go back as they came.
  return content.map((part) => (part.type === 'output_text' ? { type: 'output_text', text: part.text, annotations: part.annotations ?? [] } : { type: 'refusal', refusal: part.refusal }));
}

function convertUserContent(content: string | UserContentPart[], param: string): string | unknown[] {
  if (typeof content === 'string') return content;
  return content.map((part, index) => convertUserPart(part, `${param}[${index}]`));
}

function convertUserPart(part: UserContentPart | FunctionCallOutputPart, param: string): unknown {
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text', text: part.text, ...breakpointOf(part) };
    case 'input_image':
      if (!part.image_url) throw invalidRequest('An input_image needs an image_url for this upstream.', `${param}.image_url`, 'missing_required_parameter');
      return { type: 'input_image', image_url: part.image_url, detail: part.detail ?? 'auto', ...breakpointOf(part) };
    case 'input_file':
      if (!part.file_data && !part.file_url) throw invalidRequest('An input_file needs file_data or file_url.', `${param}.file_data`, 'missing_required_parameter');
      return {
        type: 'input_file',
        ...(part.file_data && { file_data: part.file_data }),
        ...(part.file_url && { file_url: part.file_url }),
        ...(part.filename != null && { filename: part.filename }),
        ...(part.detail != null && { detail: part.detail }),
        ...breakpointOf(part),
      };
    case 'input_video':
      throw invalidRequest('Video input is not supported by OpenAI Responses upstreams.', `${param}.type`, 'unsupported_parameter');
    default:
      return assertNever(part);
  }
}

/** A client's explicit prompt-cache breakpoint, passed on as it came. */
function breakpointOf(part: { prompt_cache_breakpoint?: unknown }): { prompt_cache_breakpoint?: unknown } {
  return part.prompt_cache_breakpoint ? { prompt_cache_breakpoint: part.prompt_cache_breakpoint } : {};
}

function convertToolChoice(choice: FunctionToolChoice, freeform: ReadonlySet<string>): unknown {
  if (typeof choice === 'string') return choice;
  const named = (name: string) => ({ type: freeform.has(name) ? 'custom' : 'function', name });
  if (choice.type === 'function') return named(choice.name);
  return { type: 'allowed_tools', mode: choice.mode ?? 'auto', tools: [...choice.tools.map((tool) => named(tool.name)), ...(choice.hosted ?? []).map((type) => ({ type }))] };
}

/** The Responses API names every JSON schema format; a format without a schema is plain JSON mode. */
function convertTextFormat(format: TextFormatParam | null): unknown {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object' || !format.schema) return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: format.name ?? 'response',
    ...(format.description !== undefined && { description: format.description }),
    schema: format.schema,
    ...(format.strict != null && { strict: format.strict }),
  };
}
