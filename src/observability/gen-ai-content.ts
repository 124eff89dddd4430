import type { ModelCallOutput } from '../engine/loop-observer.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { TurnFinish, TurnRequest } from '../providers/provider.ts';

/**
 * A model call's content in the GenAI conventions' message shapes
 * (gen-ai-input-messages.json, gen-ai-output-messages.json): messages of
 * `parts` — text, tool calls, tool call responses, reasoning. Recorded only
 * when the operator opted in (`tracing.captureContent`), as JSON strings
 * (span attributes here take no nested values). Images and files are named
 * by their kind, never copied: a trace is no place for their bytes.
 */

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string }
  | { type: 'reasoning'; content: string }
  | { type: 'image' | 'file' };

interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: Part[];
  finish_reason?: string;
}

/** `gen_ai.system_instructions`: the call's instructions, or null without any. */
export function systemInstructions(request: TurnRequest): string | null {
  return request.instructions ? JSON.stringify([{ type: 'text', content: request.instructions }]) : null;
}

/** `gen_ai.input.messages`: the conversation the model was sent, in order; consecutive assistant items form one message. */
export function inputMessages(request: TurnRequest): string {
  const messages: Message[] = [];
  const add = (role: Message['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = messages.at(-1);
    if (role === 'assistant' && last?.role === 'assistant') last.parts.push(...parts);
    else messages.push({ role, parts });
  };
  for (const item of request.items) {
    const message = messageOf(item);
    if (message) add(message.role, message.parts);
  }
  return JSON.stringify(messages);
}

/** `gen_ai.output.messages`: what the model answered in this call. */
export function outputMessages(output: ModelCallOutput, finish: TurnFinish | null): string {
  const parts: Part[] = [];
  if (output.text) parts.push({ type: 'text', content: output.text });
  if (output.refusal) parts.push({ type: 'text', content: output.refusal });
  for (const call of output.toolCalls) parts.push({ type: 'tool_call', id: call.callId, name: call.name, arguments: parsedArguments(call.arguments) });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason(finish) }]);
}

/** `gen_ai.tool.definitions`: the function tools the model was offered. */
export function toolDefinitions(request: TurnRequest): string | null {
  if (request.tools.length === 0) return null;
  return JSON.stringify(request.tools.map((tool) => ({ type: 'function', name: tool.name, ...(tool.description && { description: tool.description }), ...(tool.parameters && { parameters: tool.parameters }) })));
}

/** Tool arguments are JSON text from the model; the conventions want the object when there is one. */
export function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The conventions' finish reasons: `stop`, `length`, `content_filter`, `tool_call`, `error`. */
function finishReason(finish: TurnFinish | null): string {
  if (!finish) return 'error';
  switch (finish.reason) {
    case 'tool_calls':
      return 'tool_call';
    case 'other':
      return finish.raw ?? 'other';
    default:
      return finish.reason;
  }
}

function messageOf(item: InputItem): Message | null {
  switch (item.type) {
    case 'message': {
      const role = item.role === 'developer' ? 'system' : item.role;
      if (typeof item.content === 'string') return { role, parts: [{ type: 'text', content: item.content }] };
      return { role, parts: item.content.map(partOf) };
    }
    case 'function_call':
      return { role: 'assistant', parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: parsedArguments(item.arguments) }] };
    case 'custom_tool_call':
      return { role: 'assistant', parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.input }] };
    case 'mcp_call':
      return { role: 'assistant', parts: [{ type: 'tool_call', id: item.id ?? '', name: item.name, arguments: parsedArguments(item.arguments) }] };
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: item.call_id, response: typeof item.output === 'string' ? item.output : item.output.map((part) => (part.type === 'input_text' ? part.text : `[${part.type}]`)).join('') }] };
    case 'reasoning': {
      const text = [...(item.content ?? []), ...item.summary].map((part) => part.text).join('\n');
      return text ? { role: 'assistant', parts: [{ type: 'reasoning', content: text }] } : null;
    }
    default:
      // Bookkeeping items (references, listings, approvals, compactions, tool searches) are not model content.
      return null;
  }
}

function partOf(part: Extract<InputItem, { type: 'message' }>['content'][number] & object): Part {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', content: part.text };
    case 'refusal':
      return { type: 'text', content: part.refusal };
    case 'input_image':
      return { type: 'image' };
    case 'input_file':
      return { type: 'file' };
  }
}
