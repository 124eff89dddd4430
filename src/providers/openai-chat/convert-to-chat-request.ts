import { invalidRequest } from '../../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem, UserContentPart } from '../../protocol/input-items.ts';
import type { FunctionToolChoice, TextFormatParam } from '../../protocol/create-response-request.ts';
import { assertNever } from '../../util/assert-never.ts';
import type { TurnRequest } from '../provider.ts';
import { forEachWireItem } from '../wire-items.ts';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatToolCall } from './chat-wire.ts';
import { openReasoningText } from '../../protocol/sealed-reasoning-text.ts';
import { callSignatures, checksCallSignatures, SKIP_SIGNATURE_VALIDATOR } from '../gemini/thought-signatures.ts';
import { asMistralTakesThem, nineAlphanumerics, speaksMistral, type ChatDialect } from './mistral-dialect.ts';
import { openReasoningDetails, type ReasoningDetail } from './reasoning-details.ts';
import type { ReasoningField } from './reasoning-field.ts';

export interface ChatRequestOptions {
  /** Which field carries the output token limit: OpenAI wants the new one, many compatible servers the old. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Which server's rules earlier turns go back by (mistral-dialect.ts); `auto` by default. */
  dialect?: ChatDialect;
}

/** What of earlier turns' reasoning goes back (reasoning-field.ts): in which field (null: none), and OpenRouter's details or not. */
export interface ReasoningReturn {
  field: ReasoningField | null;
  details: boolean;
}

const NO_REASONING: ReasoningReturn = { field: null, details: false };

/** Translates one turn into a Chat Completions request body (PROTOCOL-NOTES §4, §6). */
export function convertToChatRequest(request: TurnRequest, options: ChatRequestOptions, reasoning: ReasoningReturn = NO_REASONING): ChatRequest {
  const body: ChatRequest = {
    model: request.model,
    messages: messagesFor(request, options.dialect ?? 'auto', reasoning.field, reasoning.details),
    stream: request.stream,
  };
  if (request.stream) body.stream_options = { include_usage: true };

  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description != null && { description: tool.description }),
        ...(tool.parameters != null && { parameters: tool.parameters }),
        ...(tool.strict != null && { strict: tool.strict }),
      },
    }));
    if (request.toolChoice !== null) body.tool_choice = convertToolChoice(request.toolChoice);
    // OpenAI rejects parallel_tool_calls on a request without tools.
    if (request.parallelToolCalls !== null) body.parallel_tool_calls = request.parallelToolCalls;
  }

  const responseFormat = convertTextFormat(request.textFormat);
  if (responseFormat) body.response_format = responseFormat;
  if (request.verbosity !== null) body.verbosity = request.verbosity;
  if (request.maxOutputTokens !== null) body[options.maxTokensField] = request.maxOutputTokens;
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.presencePenalty !== null) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) body.frequency_penalty = request.frequencyPenalty;
  if (request.reasoningEffort !== null) body.reasoning_effort = request.reasoningEffort;
  if (request.logprobs) {
    body.logprobs = true;
    if (request.topLogprobs) body.top_logprobs = request.topLogprobs;
  }
  if (request.safetyIdentifier !== null) body.safety_identifier = request.safetyIdentifier;
  if (request.promptCacheKey !== null) body.prompt_cache_key = request.promptCacheKey;
  if (request.serviceTier !== null) body.service_tier = request.serviceTier;
  return body;
}

function messagesFor(request: TurnRequest, dialect: ChatDialect, reasoningField: ReasoningField | null, details: boolean): ChatMessage[] {
  const mistral = speaksMistral(dialect, request.model);
  const gemini = GEMINI_MODEL.test(request.model);
  const messages = convertMessages(request.instructions, request.items, request.historyLength, mistral ? nineAlphanumerics : null, gemini, reasoningField, details);
  if (gemini && checksCallSignatures(request.model)) signFirstCalls(messages);
  return mistral ? asMistralTakesThem(messages) : messages;
}

/**
 * Gemini 3 refuses a step whose first call carries no signature ("Function
 * call is missing a thought_signature"): one that never had one (begun on
 * another provider, or resent by a client without it) takes Google's
 * documented stand-in, as the native provider does.
 */
function signFirstCalls(messages: ChatMessage[]): void {
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.tool_calls?.length || message.tool_calls.some((call) => call.extra_content)) continue;
    message.tool_calls[0]!.extra_content = { google: { thought_signature: SKIP_SIGNATURE_VALIDATOR } };
  }
}

/** The reasoning an item shows in the clear: its text, else its summary. */
function clearTextOf(item: Extract<InputItem, { type: 'reasoning' }>): string {
  const text = (item.content ?? []).map((part) => part.text).join('');
  return text || item.summary.map((part) => part.text).join('\n\n');
}

/**
 * Gemini's models by name, as its OpenAI-compatible endpoint serves them: only they are sent
 * their calls' signatures back (`extra_content`), a field other servers refuse (Mistral: 422
 * "Extra inputs are not permitted") or were never given.
 */
const GEMINI_MODEL = /^(?:models\/)?gemini/i;

function convertMessages(instructions: string | null, items: InputItem[], historyLength: number, callId: ((id: string) => string) | null, signed: boolean, reasoningField: ReasoningField | null, details: boolean): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  // Consecutive function calls of one model turn become one assistant message.
  let pendingAssistant: Extract<ChatMessage, { role: 'assistant' }> | null = null;
  // The reasoning a Chat server gave (`reasoning_content`), for the assistant message of its turn.
  let pendingReasoning = '';
  /** OpenRouter's reasoning details of the same turn (reasoning-details.ts). */
  let pendingDetails: ReasoningDetail[] = [];
  const withReasoning = (message: Extract<ChatMessage, { role: 'assistant' }>) => {
    if (pendingReasoning && reasoningField) message[reasoningField] = (message[reasoningField] ?? '') + pendingReasoning;
    if (details && pendingDetails.length > 0) message.reasoning_details = [...(message.reasoning_details ?? []), ...pendingDetails];
    pendingReasoning = '';
    pendingDetails = [];
    return message;
  };
  const signatures = signed ? callSignatures(items) : null;
  // Images and files tools answered with: a tool message takes text only, so they follow that turn's tool messages as one user message.
  let toolAttachments: ChatContentPart[] = [];
  const attachToolOutputs = () => {
    if (toolAttachments.length === 0) return;
    messages.push({ role: 'user', content: toolAttachments });
    toolAttachments = [];
  };

  forEachWireItem(items, historyLength, (item, param) => {
    if (item.type !== 'function_call_output') attachToolOutputs();
    if (item.type !== 'function_call' && item.type !== 'reasoning') pendingAssistant = null;
    if (item.type === 'function_call_output' || (item.type === 'message' && item.role !== 'assistant')) {
      pendingReasoning = '';
      pendingDetails = [];
    }
    switch (item.type) {
      case 'message': {
        if (item.role === 'assistant') {
          const message = withReasoning(convertAssistantContent(item.content));
          messages.push(message);
          pendingAssistant = message;
        } else if (item.role === 'user') {
          messages.push({ role: 'user', content: convertUserContent(item.content, `${param}.content`) });
        } else {
          messages.push({ role: item.role, content: typeof item.content === 'string' ? item.content : item.content.map((part) => ({ type: 'text', text: part.text })) });
        }
        return;
      }
      case 'function_call': {
        const call: ChatToolCall = { id: callId ? callId(item.call_id) : item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
        const signature = signatures?.of(item);
        if (signature) call.extra_content = { google: { thought_signature: signature } };
        if (pendingAssistant) (withReasoning(pendingAssistant).tool_calls ??= []).push(call);
        else {
          pendingAssistant = withReasoning({ role: 'assistant', content: null, tool_calls: [call] });
          messages.push(pendingAssistant);
        }
        return;
      }
      case 'function_call_output': {
        const { text, attachments } = splitToolOutput(item.output, `${param}.output`);
        const id = callId ? callId(item.call_id) : item.call_id;
        if (attachments.length === 0) {
          messages.push({ role: 'tool', tool_call_id: id, content: text });
          return;
        }
        const counted = countAttachments(attachments);
        messages.push({ role: 'tool', tool_call_id: id, content: `${text}${text ? '\n\n' : ''}[${counted} of this output ${attachments.length === 1 ? 'is' : 'are'} in the next user message]` });
        toolAttachments.push({ type: 'text', text: `${counted} returned by tool call ${id}:` }, ...attachments);
        return;
      }
      case 'reasoning': {
        // Chat Completions has no standard field for prior reasoning, but DeepSeek's thinking mode refuses a tool
        // loop whose assistant messages lack theirs (400 "Missing reasoning_content"), and other servers that
        // produce reasoning take it back or ignore it (reasoning-field.ts).
        const encrypted = item.encrypted_content;
        const detailed = encrypted ? openReasoningDetails(encrypted) : null;
        // OpenRouter's details go back as they came, and the text they were given with beside them.
        if (detailed) {
          pendingReasoning += detailed.text;
          pendingDetails.push(...detailed.details);
          return;
        }
        // The same reasoning as a client resends it sealed (include reasoning.encrypted_content, store false); else what the
        // item shows in the clear, whoever made it (another provider's sealed value means nothing here, but its text does:
        // a conversation begun on Claude or OpenAI goes on on DeepSeek only with its reasoning on the calling turn).
        pendingReasoning += (encrypted ? openReasoningText(encrypted) : null) ?? clearTextOf(item);
        return;
      }
      default:
        return assertNever(item);
    }
  });
  attachToolOutputs();
  return messages;
}

function convertAssistantContent(content: Extract<InputItem, { role: 'assistant' }>['content']): Extract<ChatMessage, { role: 'assistant' }> {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text = '';
  let refusal = '';
  for (const part of content) {
    if (part.type === 'output_text') text += part.text;
    else refusal += part.refusal;
  }
  return { role: 'assistant', content: text || null, ...(refusal && { refusal }) };
}

function convertUserContent(content: string | UserContentPart[], param: string): string | ChatContentPart[] {
  if (typeof content === 'string') return content;
  return content.map((part, index) => convertUserPart(part, `${param}[${index}]`));
}

function convertUserPart(part: UserContentPart | FunctionCallOutputPart, param: string): ChatContentPart {
  switch (part.type) {
    case 'input_text':
      return { type: 'text', text: part.text };
    case 'input_image':
      if (!part.image_url) throw invalidRequest('An input_image needs an image_url for this upstream.', `${param}.image_url`, 'missing_required_parameter');
      return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail != null && { detail: part.detail === 'original' ? 'high' : part.detail }) } };
    case 'input_file':
      if (part.file_url) throw invalidRequest('Chat Completions upstreams take files as file_data, not file_url.', `${param}.file_url`, 'unsupported_parameter');
      if (!part.file_data) throw invalidRequest('An input_file needs file_data for this upstream.', `${param}.file_data`, 'missing_required_parameter');
      return { type: 'file', file: { file_data: part.file_data, ...(part.filename != null && { filename: part.filename }) } };
    case 'input_video':
      throw invalidRequest('Video input is not supported by Chat Completions upstreams.', `${param}.type`, 'unsupported_parameter');
    default:
      return assertNever(part);
  }
}

/** A function output given as parts: its text for the tool message, its images and files for the user message after it. */
function splitToolOutput(output: string | FunctionCallOutputPart[], param: string): { text: string; attachments: ChatContentPart[] } {
  if (typeof output === 'string') return { text: output, attachments: [] };
  let text = '';
  const attachments: ChatContentPart[] = [];
  output.forEach((part, index) => {
    if (part.type === 'input_text') text += part.text;
    else attachments.push(convertUserPart(part, `${param}[${index}]`));
  });
  return { text, attachments };
}

/** "1 image", "2 files", "3 attachments" (images and files together). */
function countAttachments(attachments: readonly ChatContentPart[]): string {
  const images = attachments.filter((part) => part.type === 'image_url').length;
  const kind = images === attachments.length ? 'image' : images === 0 ? 'file' : 'attachment';
  return `${attachments.length} ${kind}${attachments.length === 1 ? '' : 's'}`;
}

function convertToolChoice(choice: FunctionToolChoice): unknown {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') return { type: 'function', function: { name: choice.name } };
  return {
    type: 'allowed_tools',
    allowed_tools: { mode: choice.mode ?? 'auto', tools: choice.tools.map((tool) => ({ type: 'function', function: { name: tool.name } })) },
  };
}

function convertTextFormat(format: TextFormatParam | null): unknown {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object' || !format.schema) return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name ?? 'response',
      ...(format.description !== undefined && { description: format.description }),
      schema: format.schema,
      ...(format.strict != null && { strict: format.strict }),
    },
  };
}
