import { invalidRequest } from '../../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem, UserContentPart } from '../../protocol/input-items.ts';
import { parseJsonWithinDepth } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';
import { isHostedCallItem } from '../hosted-call-items.ts';
import { renderCall, resultHeader } from './tool-prompt.ts';

type MessageItem = Extract<InputItem, { type: 'message' }>;
type UserMessage = Extract<MessageItem, { role: 'user' }>;
type AssistantMessage = Extract<MessageItem, { role: 'assistant' }>;

export interface RenderedHistory {
  items: InputItem[];
  /** How many of `items` hold inherited history (the request's `historyLength`, recounted). */
  historyLength: number;
}

/**
 * The conversation as a model without native tools can take it: each
 * `function_call` becomes assistant text in the protocol's own shape, each
 * `function_call_output` a user message naming the call id and tool, so the
 * upstream never sees a tool item. A rendered message joins the message of
 * the same role next to it (the text before a call, the other results of a
 * turn, the user's next words): many chat templates of such models insist
 * that user and assistant alternate. Hosted calls another upstream ran are
 * left out (hosted-call-items.ts): a model writing its calls in text runs none.
 */
export function renderToolHistory(items: readonly InputItem[], historyLength: number): RenderedHistory {
  const names = new Map<string, string>();
  for (const item of items) if (item.type === 'function_call') names.set(item.call_id, item.name);
  const rendered: InputItem[] = [];
  const fromTools = new Set<InputItem>();
  let renderedHistoryLength = 0;
  items.forEach((item, index) => {
    if (isHostedCallItem(item)) {
      if (index < historyLength) renderedHistoryLength = rendered.length;
      return;
    }
    const tool = renderToolItem(item, names);
    const message = tool ?? item;
    const previous = rendered.at(-1);
    const joined = previous && (tool || fromTools.has(previous)) ? join(previous, message) : null;
    if (joined) {
      rendered[rendered.length - 1] = joined;
      fromTools.add(joined);
      return;
    }
    rendered.push(message);
    if (tool) fromTools.add(message);
    if (index < historyLength) renderedHistoryLength = rendered.length;
  });
  return { items: rendered, historyLength: renderedHistoryLength };
}

function renderToolItem(item: InputItem, names: ReadonlyMap<string, string>): MessageItem | null {
  if (item.type === 'function_call') return { type: 'message', role: 'assistant', content: renderCall(item.name, parseArguments(item.arguments)) };
  if (item.type !== 'function_call_output') return null;
  const header = resultHeader(item.call_id, names.get(item.call_id) ?? null);
  if (typeof item.output === 'string') return { type: 'message', role: 'user', content: `${header}\n${item.output}` };
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text: `${header}\n` }, ...item.output.map(userPart)] };
}

function userPart(part: FunctionCallOutputPart): UserContentPart {
  if (part.type === 'input_video') throw invalidRequest('A function_call_output holding video cannot be shown to a model that calls tools in text.', null, 'unsupported_parameter');
  return part;
}

/** Two neighbouring messages as one, when they are of the same role and both plain enough to join; else null. */
function join(first: InputItem, second: InputItem): MessageItem | null {
  if (first.type !== 'message' || second.type !== 'message' || first.role !== second.role) return null;
  if (first.role === 'assistant' && second.role === 'assistant') {
    const a = assistantText(first);
    const b = assistantText(second);
    return a === null || b === null ? null : { type: 'message', role: 'assistant', content: [a, b].filter(Boolean).join('\n\n') };
  }
  if (first.role === 'user' && second.role === 'user') return { type: 'message', role: 'user', content: joinUserContent(first.content, second.content) };
  return null;
}

/** An assistant message's text; null when it holds a refusal, which must keep its own part. */
function assistantText(message: AssistantMessage): string | null {
  if (typeof message.content === 'string') return message.content;
  let text = '';
  for (const part of message.content) {
    if (part.type !== 'output_text') return null;
    text += part.text;
  }
  return text;
}

function joinUserContent(first: UserMessage['content'], second: UserMessage['content']): UserMessage['content'] {
  if (typeof first === 'string' && typeof second === 'string') return `${first}\n\n${second}`;
  const parts = (content: UserMessage['content']): UserContentPart[] => (typeof content === 'string' ? [{ type: 'input_text', text: content }] : content);
  return [...parts(first), { type: 'input_text', text: '\n\n' }, ...parts(second)];
}

function parseArguments(text: string): unknown {
  try {
    return parseJsonWithinDepth(text, REQUEST_LIMITS.maxJsonDepth);
  } catch {
    // Arguments a client resent as not-quite-JSON are shown as they are.
    return text;
  }
}
