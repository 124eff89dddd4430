import type { AnthropicBlock, AnthropicRequest } from './convert-to-anthropic-request.ts';

/** Anthropic's marker for "cache the prompt up to here" (5-minute lifetime, its default). */
const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Marks where Anthropic may cache the prompt (`cache_control`). OpenAI and
 * most Chat Completions servers cache a repeated prompt prefix by
 * themselves; Anthropic caches only up to a block that asks for it, so a
 * client written for OpenAI would otherwise pay full price for the whole
 * history on every turn of an agentic loop, where each call repeats the
 * last one and adds a little.
 *
 * Three breakpoints of Anthropic's four:
 * - the end of the fixed prefix (the system prompt, else the tools), shared
 *   by every conversation that uses it;
 * - the end of the last message, written for the next call to read;
 * - the end of the message two before it: where the previous call of this
 *   conversation put its last breakpoint, so this call reads what that one
 *   wrote even when the turn between added more blocks than Anthropic looks
 *   back over (about 20; a turn of many parallel tool calls does).
 *
 * A prefix shorter than the model's minimum (1,024 tokens for most) is
 * simply not cached, at no cost. Thinking blocks cannot carry the marker:
 * the nearest block before them that can does.
 */
export function markCacheBreakpoints(body: AnthropicRequest): void {
  if (body.system !== undefined) {
    const system = typeof body.system === 'string' ? [{ type: 'text' as const, text: body.system }] : body.system;
    const last = system.at(-1);
    if (last) body.system = [...system.slice(0, -1), { ...last, cache_control: EPHEMERAL }];
  } else if (body.tools?.length) {
    const last = body.tools.length - 1;
    body.tools = body.tools.map((tool, index) => (index === last ? { ...tool, cache_control: EPHEMERAL } : tool));
  }
  const { messages } = body;
  for (const index of [messages.length - 1, messages.length - 3]) {
    const message = messages[index];
    if (!message) continue;
    const at = message.content.findLastIndex(canCarryMarker);
    if (at < 0) continue;
    const content = [...message.content];
    content[at] = { ...content[at], cache_control: EPHEMERAL } as AnthropicBlock;
    messages[index] = { ...message, content };
  }
}

function canCarryMarker(block: AnthropicBlock): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}
