import { invalidRequest } from '../../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem, UserContentPart } from '../../protocol/input-items.ts';
import { parseJsonWithinDepth } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';
import { assertNever } from '../../util/assert-never.ts';
import { parseDataUrl } from '../../util/data-url.ts';
import { imageTypeOf } from '../../util/image-type.ts';
import type { TurnRequest } from '../provider.ts';
import { assistantTexts, instructionsText, separateInstructions, type InstructionPiece } from '../wire-items.ts';
import { describedSchema } from '../described-schema.ts';
import { clearCacheBreakpoints, markCacheBreakpoints } from './cache-breakpoints.ts';
import { decodeReasoning } from './reasoning-blocks.ts';
import { BUDGET_THINKING, claudeEffortFor, type ClaudeThinkingSupport } from './claude-thinking-support.ts';
import { claudeStrictSchema } from './strict-schema.ts';
import { ToolUseIds } from './tool-use-id.ts';

/** Where Anthropic may cache the prompt up to (cache-breakpoints.ts). */
export interface CacheControl {
  cache_control?: { type: 'ephemeral'; ttl?: '5m' | '1h' };
}

/** Content blocks the gateway sends (the slice of the Messages API it uses). */
export type AnthropicBlock =
  | ({ type: 'text'; text: string } & CacheControl)
  | ({ type: 'image'; source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } } & CacheControl)
  | ({ type: 'document'; source: { type: 'base64'; media_type: string; data: string } | { type: 'text'; media_type: 'text/plain'; data: string } | { type: 'url'; url: string }; title?: string } & CacheControl)
  | ({ type: 'tool_use'; id: string; name: string; input: unknown } & CacheControl)
  | ({ type: 'tool_result'; tool_use_id: string; content: string | AnthropicBlock[]; is_error?: boolean } & CacheControl)
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string | ({ type: 'text'; text: string } & CacheControl)[];
  stream: true;
  tools?: ({ name: string; description?: string; input_schema: Record<string, unknown>; strict?: boolean } & CacheControl)[];
  tool_choice?: { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean } | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'adaptive'; display?: 'summarized' };
  output_config?: { format?: { type: 'json_schema'; schema: Record<string, unknown> }; effort?: string };
  temperature?: number;
  top_p?: number;
  metadata?: { user_id: string };
  service_tier?: 'auto' | 'standard_only';
}

export interface AnthropicRequestOptions {
  /** `max_tokens` is required upstream: the default when the request sets no `max_output_tokens`. */
  defaultMaxTokens: number;
  /** `auto`: mark where Anthropic may cache the prompt, as OpenAI caches by itself (cache-breakpoints.ts); `off`: no marks. */
  promptCaching?: 'auto' | 'off';
  /** How the model takes thinking (claude-model-catalog.ts); unset: a budget. */
  thinking?: ClaudeThinkingSupport;
}

/** What `text.format: json_object` becomes for Claude. */
export const JSON_OBJECT_INSTRUCTION = 'Respond with one valid JSON object and nothing else: no prose, no code fences.';

// `max` stays under the 64k output tokens of Claude's larger models once the answer's own room is added.
const THINKING_BUDGET: Record<string, number> = { minimal: 1_024, low: 2_048, medium: 8_192, high: 16_384, xhigh: 32_000, max: 48_000 };
/** Anthropic's least thinking budget. */
const MIN_THINKING_BUDGET = 1_024;

/** Translates one turn into a Messages API request (PROTOCOL-NOTES §5, §6). */
export function convertToAnthropicRequest(request: TurnRequest, options: AnthropicRequestOptions): AnthropicRequest {
  if (request.logprobs) {
    // Claude gives none: refused as OpenAI refuses them for its reasoning models, rather than answered without them.
    const param = request.topLogprobs ? 'top_logprobs' : 'include';
    throw invalidRequest(`Unsupported parameter: Claude models give no token log probabilities; leave out ${param === 'top_logprobs' ? 'top_logprobs' : '"message.output_text.logprobs" from include'}.`, param, 'unsupported_parameter');
  }
  // Claude has no repetition penalties: one asked for is refused rather than ignored (0, every schema's default, asks nothing).
  for (const [param, value] of [['presence_penalty', request.presencePenalty], ['frequency_penalty', request.frequencyPenalty]] as const) {
    if (value) throw invalidRequest(`Unsupported parameter: '${param}' is not supported by Claude models.`, param, 'unsupported_parameter');
  }
  const { instructions, messages } = convertConversation(request.instructions, request.items, request.historyLength);
  const body: AnthropicRequest = { model: request.model, max_tokens: request.maxOutputTokens ?? options.defaultMaxTokens, messages, stream: true };
  const wantsJsonObject = request.textFormat?.type === 'json_object' || (request.textFormat?.type === 'json_schema' && !request.textFormat.schema);
  // JSON mode has no native form (structured outputs need a closed schema): the model is told instead.
  const system = systemOf(wantsJsonObject ? [...instructions, { text: JSON_OBJECT_INSTRUCTION, cacheBreakpoint: false }] : instructions);
  if (system) body.system = system;

  const allowed = typeof request.toolChoice === 'object' && request.toolChoice?.type === 'allowed_tools' ? new Set(request.toolChoice.tools.map((tool) => tool.name)) : null;
  // allowed_tools has no native form: the model is only shown the allowed tools.
  const tools = request.tools.filter((tool) => !allowed || allowed.has(tool.name));
  if (tools.length > 0) {
    body.tools = tools.map((tool) => {
      const schema = tool.parameters ?? { type: 'object', properties: {} };
      return {
        name: tool.name,
        ...(tool.description != null && tool.description !== '' && { description: tool.description }),
        // A strict tool's schema is enforced by constrained decoding, which takes only what it can enforce.
        input_schema: tool.strict === true ? claudeStrictSchema(schema) : schema,
        ...(tool.strict != null && { strict: tool.strict }),
      };
    });
    const choice = convertToolChoice(request.toolChoice);
    const noParallel = request.parallelToolCalls === false;
    if (choice || noParallel) body.tool_choice = { ...(choice ?? { type: 'auto' }), ...(noParallel && { disable_parallel_tool_use: true }) };
  }

  if (request.textFormat?.type === 'json_schema' && request.textFormat.schema) body.output_config = { format: { type: 'json_schema', schema: claudeStrictSchema(describedSchema(request.textFormat.schema, request.textFormat.description)) } };
  const support = options.thinking ?? BUDGET_THINKING;
  if (!support.thinks && request.reasoningEffort && THINKING_BUDGET[request.reasoningEffort]) {
    // As OpenAI answers reasoning.effort for a model that does not reason.
    throw invalidRequest("Unsupported parameter: 'reasoning.effort' is not supported with this model (it does not think).", 'reasoning.effort', 'unsupported_parameter');
  }
  const budget = thinkingBudget(request, body);
  if (budget !== null) {
    if (support.adaptive) thinkAdaptively(request, body, support, budget, options.defaultMaxTokens);
    else thinkOnBudget(request, body, support, budget, options.defaultMaxTokens);
    checkSamplingWithThinking(request);
  }
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.safetyIdentifier !== null) body.metadata = { user_id: request.safetyIdentifier };
  // Anthropic's tiers: `auto` takes priority capacity where the organisation has it, `standard_only` never does (OpenAI's `default` and `flex`, which Anthropic has no cheaper lane for).
  if (request.serviceTier !== null) body.service_tier = request.serviceTier === 'default' || request.serviceTier === 'flex' ? 'standard_only' : 'auto';
  if ((options.promptCaching ?? 'auto') === 'auto') markCacheBreakpoints(body, request.promptCache);
  else clearCacheBreakpoints(body);
  return body;
}

/**
 * The thinking budget for the request's `reasoning.effort`, or null for no
 * thinking. `max_output_tokens` bounds reasoning and answer together (as
 * OpenAI counts it), so under a client's cap thinking takes at most half of
 * it, and none where half is below Anthropic's least budget. Claude cannot
 * think while a tool is forced (`tool_choice` required or naming one, which
 * OpenAI's reasoning models allow): the tool choice, which the client's
 * code relies on, wins.
 */
function thinkingBudget(request: TurnRequest, body: AnthropicRequest): number | null {
  const budget = request.reasoningEffort ? THINKING_BUDGET[request.reasoningEffort] : undefined;
  if (!budget) return null;
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') return null;
  // A tool loop is one assistant turn with one thinking setting: one begun without thinking (a forced tool, another
  // provider's turn, a client that dropped the block) goes on without, as Claude refuses thinking on beside a bare tool_use.
  if (inToolTurnWithoutThinking(body.messages)) return null;
  if (request.maxOutputTokens === null) return budget;
  const fitting = Math.min(budget, Math.floor(request.maxOutputTokens / 2));
  return fitting >= MIN_THINKING_BUDGET ? fitting : null;
}

/**
 * What a budget-thinking model's `max_tokens` may be when the Models API did
 * not say: Claude Opus 4 and 4.1's 32,000 (the smallest of the models that
 * think on a budget with effort above `high`).
 */
const ASSUMED_MAX_TOKENS = 32_000;

/**
 * Thinking on a budget: without a client's cap, the budget must still leave
 * the answer its room, within the model's own `max_tokens`; where both do not
 * fit, thinking gives way to the answer's room (and none below Anthropic's
 * least budget).
 */
function thinkOnBudget(request: TurnRequest, body: AnthropicRequest, support: ClaudeThinkingSupport, budget: number, defaultMaxTokens: number): void {
  if (body.max_tokens > budget) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
    return;
  }
  const ceiling = support.maxTokens ?? ASSUMED_MAX_TOKENS;
  body.max_tokens = Math.min(budget + defaultMaxTokens, ceiling);
  const fitting = Math.min(budget, body.max_tokens - Math.min(defaultMaxTokens, Math.floor(body.max_tokens / 2)));
  if (fitting >= MIN_THINKING_BUDGET) body.thinking = { type: 'enabled', budget_tokens: fitting };
  else body.max_tokens = request.maxOutputTokens ?? defaultMaxTokens;
}

/**
 * Thinking for a model that decides itself how much to think: `reasoning.effort`
 * is its `output_config.effort` (the nearest level it takes), and the budget
 * the effort would have had is the room left for thinking beside the answer
 * when the client set no cap. Its thinking is shown summarized when the
 * client asked for a summary (newer models omit it otherwise).
 */
function thinkAdaptively(request: TurnRequest, body: AnthropicRequest, support: ClaudeThinkingSupport, budget: number, defaultMaxTokens: number): void {
  body.thinking = request.reasoningSummary !== null ? { type: 'adaptive', display: 'summarized' } : { type: 'adaptive' };
  const effort = claudeEffortFor(request.reasoningEffort!, support.efforts);
  if (effort) body.output_config = { ...body.output_config, effort };
  if (request.maxOutputTokens === null) body.max_tokens = Math.min(Math.max(body.max_tokens, budget + defaultMaxTokens), support.maxTokens ?? Number.POSITIVE_INFINITY);
}

/** Whether the conversation ends inside a tool turn (tool results answering the last assistant message) that did not start with thinking. */
function inToolTurnWithoutThinking(messages: readonly AnthropicMessage[]): boolean {
  const last = messages.at(-1);
  if (last?.role !== 'user' || last.content[0]?.type !== 'tool_result') return false;
  const turn = messages.at(-2);
  const first = turn?.role === 'assistant' ? turn.content[0] : undefined;
  return first !== undefined && first.type !== 'thinking' && first.type !== 'redacted_thinking';
}

/**
 * Claude thinks at its own sampling settings: a `temperature`, or a `top_p`
 * below 0.95, beside `reasoning.effort` is refused here as OpenAI refuses
 * `temperature` for its reasoning models, naming the parameter (Anthropic's
 * own refusal names none).
 */
function checkSamplingWithThinking(request: TurnRequest): void {
  if (request.temperature !== null && request.temperature !== 1) {
    throw invalidRequest("Unsupported parameter: 'temperature' cannot be set together with reasoning.effort for this model (Claude thinks at temperature 1). Leave out one of them.", 'temperature', 'unsupported_parameter');
  }
  if (request.topP !== null && request.topP < 0.95) {
    throw invalidRequest("Unsupported parameter: 'top_p' below 0.95 cannot be set together with reasoning.effort for this model (Claude's thinking takes top_p from 0.95 to 1). Leave out one of them.", 'top_p', 'unsupported_parameter');
  }
}

/** The body of Messages' `count_tokens`: what `convertToAnthropicRequest` sends, less what only sampling reads. */
export type AnthropicCountRequest = Omit<AnthropicRequest, 'max_tokens' | 'stream' | 'temperature' | 'top_p' | 'metadata'>;

export function toAnthropicCountRequest(body: AnthropicRequest): AnthropicCountRequest {
  const { max_tokens: _maxTokens, stream: _stream, temperature: _temperature, top_p: _topP, metadata: _metadata, ...counted } = body;
  return counted;
}

function convertToolChoice(choice: TurnRequest['toolChoice']): AnthropicRequest['tool_choice'] | null {
  if (choice === null) return null;
  const mode = typeof choice === 'string' ? choice : choice.type === 'allowed_tools' ? (choice.mode ?? 'auto') : null;
  if (mode === 'auto') return { type: 'auto' };
  if (mode === 'required') return { type: 'any' };
  if (mode === 'none') return { type: 'none' };
  if (typeof choice === 'object' && choice.type === 'function') return { type: 'tool', name: choice.name };
  return null;
}

/**
 * The system prompt: one text, or, where the client marked a system or
 * developer message as a prompt-cache breakpoint, one block per piece with
 * Anthropic's cache mark on those it marked (cache-breakpoints.ts).
 */
function systemOf(pieces: readonly InstructionPiece[]): AnthropicRequest['system'] {
  const written = pieces.filter((piece) => piece.text !== '');
  if (!written.some((piece) => piece.cacheBreakpoint)) return instructionsText(written) || undefined;
  return written.map((piece) => ({ type: 'text', text: piece.text, ...(piece.cacheBreakpoint && { cache_control: { type: 'ephemeral' } }) }));
}

function convertConversation(instructions: string | null, items: InputItem[], historyLength: number): { instructions: InstructionPiece[]; messages: AnthropicMessage[] } {
  const messages: AnthropicMessage[] = [];
  const toolUseIds = new ToolUseIds();
  const push = (role: AnthropicMessage['role'], blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    // Consecutive turns of one role are one message upstream; tool results must lead their user message.
    if (last?.role === role) {
      const results = blocks.filter((block) => block.type === 'tool_result');
      if (results.length > 0 && role === 'user') {
        const firstNonResult = last.content.findIndex((block) => block.type !== 'tool_result');
        last.content.splice(firstNonResult < 0 ? last.content.length : firstNonResult, 0, ...results);
        last.content.push(...blocks.filter((block) => block.type !== 'tool_result'));
      } else {
        last.content.push(...blocks);
      }
    } else {
      messages.push({ role, content: blocks });
    }
  };

  const pieces = separateInstructions(instructions, items, historyLength, (item, param) => {
    switch (item.type) {
      case 'message':
        if (item.role === 'user') {
          push('user', typeof item.content === 'string' ? textBlocks(item.content) : item.content.flatMap((part, partIndex) => userBlock(part, `${param}.content[${partIndex}]`)));
        } else {
          push('assistant', assistantTexts(item).flatMap(textBlocks));
        }
        break;
      case 'reasoning': {
        const block = item.encrypted_content ? decodeReasoning(item.encrypted_content) : null;
        // Reasoning from other providers cannot be replayed to Claude; its signature would not verify.
        if (block) push('assistant', [block]);
        break;
      }
      case 'function_call':
        push('assistant', [{ type: 'tool_use', id: toolUseIds.call(item.call_id), name: item.name, input: parseArguments(item.arguments) }]);
        break;
      case 'function_call_output':
        push('user', [toolResult(toolUseIds.result(item.call_id), item.output, `${param}.output`)]);
        break;
      default:
        assertNever(item);
    }
  });
  return { instructions: pieces, messages };
}

/** Anthropic rejects empty text blocks. */
function textBlocks(text: string): AnthropicBlock[] {
  return text ? [{ type: 'text', text }] : [];
}

function userBlock(part: UserContentPart | FunctionCallOutputPart, param: string): AnthropicBlock[] {
  const blocks = partBlocks(part, param);
  // A client's explicit prompt-cache breakpoint is Anthropic's cache mark (its TTL is not: Anthropic's marks keep their 5 minutes).
  return part.type !== 'input_video' && part.prompt_cache_breakpoint ? blocks.map((block) => ({ ...block, cache_control: { type: 'ephemeral' } }) as AnthropicBlock) : blocks;
}

function partBlocks(part: UserContentPart | FunctionCallOutputPart, param: string): AnthropicBlock[] {
  switch (part.type) {
    case 'input_text':
      return textBlocks(part.text);
    case 'input_image': {
      if (!part.image_url) throw invalidRequest('An input_image needs an image_url for this upstream.', `${param}.image_url`, 'missing_required_parameter');
      const data = parseDataUrl(part.image_url);
      return [{ type: 'image', source: data ? { type: 'base64', media_type: claudeImageType(data, `${param}.image_url`), data: data.data } : { type: 'url', url: part.image_url } }];
    }
    case 'input_file': {
      const title = part.filename ? { title: part.filename } : {};
      if (part.file_data) return [fileBlock(parseDataUrl(part.file_data) ?? { mediaType: 'application/pdf', data: part.file_data }, title, `${param}.file_data`)];
      if (part.file_url) return [{ type: 'document', source: { type: 'url', url: part.file_url }, ...title }];
      throw invalidRequest('An input_file needs file_data or file_url.', param, 'missing_required_parameter');
    }
    case 'input_video':
      throw invalidRequest('Video input is not supported by Anthropic upstreams.', `${param}.type`, 'unsupported_parameter');
    default:
      return assertNever(part);
  }
}

/** Media types Claude reads as plain text documents (it takes text only as `text/plain`). */
const TEXT_FILE = /^(text\/[\w.+-]+|application\/(json|xml|yaml|x-yaml|x-ndjson|javascript|x-sh|sql|[\w.-]+\+(json|xml)))$/i;

/**
 * A file as Claude takes it: a PDF as a base64 document, a text file (CSV,
 * Markdown, JSON, …) as a plain-text document, an image as an image; any
 * other kind it cannot read, which is a 400 naming the file.
 */
function fileBlock(file: { mediaType: string; data: string }, title: { title?: string }, param: string): AnthropicBlock {
  const mediaType = file.mediaType.toLowerCase();
  if (mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: file.data }, ...title };
  if (TEXT_FILE.test(mediaType)) return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(file.data, 'base64').toString('utf8') }, ...title };
  if (mediaType.startsWith('image/')) return { type: 'image', source: { type: 'base64', media_type: claudeImageType(file, param), data: file.data } };
  throw invalidRequest(`Claude reads PDF, text and image files; this file is '${file.mediaType}', which it cannot read. Send it as PDF or text.`, param, 'unsupported_file_type');
}

function toolResult(toolUseId: string, output: string | FunctionCallOutputPart[], param: string): AnthropicBlock {
  if (typeof output === 'string') {
    return { type: 'tool_result', tool_use_id: toolUseId, content: output, ...(isErrorOutput(output) && { is_error: true }) };
  }
  return { type: 'tool_result', tool_use_id: toolUseId, content: output.flatMap((part, index) => userBlock(part, `${param}[${index}]`)) };
}

/** The gateway's own error outputs are `{"error": …}` objects. */
function isErrorOutput(output: string): boolean {
  if (!output.startsWith('{"error"')) return false;
  try {
    const parsed = JSON.parse(output) as { error?: unknown };
    return typeof parsed.error === 'string' && Object.keys(parsed).length === 1;
  } catch {
    return false;
  }
}

function parseArguments(text: string): unknown {
  try {
    // Deeper than a request may nest, the SDK's serialiser would overflow: such arguments count as not JSON.
    const value: unknown = parseJsonWithinDepth(text || '{}', REQUEST_LIMITS.maxJsonDepth);
    return value !== null && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

/** Claude's four image types. */
const CLAUDE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The type Claude is told an inline image is: what its bytes are (Claude
 * refuses a declared type the bytes do not match), else the declared one
 * (`image/jpg` read as `image/jpeg`) when Claude reads it; any other is a 400
 * naming the part, not the upstream's refusal of the whole request.
 */
function claudeImageType(image: { mediaType: string; data: string }, param: string): string {
  const declared = image.mediaType.toLowerCase() === 'image/jpg' ? 'image/jpeg' : image.mediaType.toLowerCase();
  const type = imageTypeOf(image.data) ?? declared;
  if (CLAUDE_IMAGE_TYPES.has(type)) return type;
  throw invalidRequest(`Claude reads PNG, JPEG, GIF and WebP images; this one is '${image.mediaType}'.`, param, 'invalid_image_format');
}
