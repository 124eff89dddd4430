import type { PromptCacheSettings } from '../provider.ts';
import type { AnthropicBlock, AnthropicRequest, CacheControl } from './convert-to-anthropic-request.ts';

/** Anthropic's marker for "cache the prompt up to here" (5-minute lifetime, its default). */
const EPHEMERAL = { type: 'ephemeral' } as const;
/** Anthropic's longest cache lifetime, for a client that asks for 30 minutes or more. */
const LONG_LIVED = { type: 'ephemeral', ttl: '1h' } as const;
/** The most marks Anthropic takes in one request (more is a 400). */
const MAX_MARKS = 4;

/**
 * Marks where Anthropic may cache the prompt (`cache_control`). OpenAI and
 * most Chat Completions servers cache a repeated prompt prefix by
 * themselves; Anthropic caches only up to a block that asks for it, so a
 * client written for OpenAI would otherwise pay full price for the whole
 * history on every turn of an agentic loop, where each call repeats the
 * last one and adds a little.
 *
 * Up to three marks of Anthropic's four, in this order of need:
 * - the end of the last message, written for the next call to read;
 * - the end of the message two before it: where the previous call of this
 *   conversation put its last mark, so this call reads what that one wrote
 *   even when the turn between added more blocks than Anthropic looks back
 *   over (about 20; a turn of many parallel tool calls does);
 * - the end of the fixed prefix (the system prompt, else the tools), shared
 *   by every conversation that uses it.
 *
 * Marks a client set itself (OpenAI's `prompt_cache_breakpoint` on a part)
 * come first: the automatic ones fill what is left of the four, and when the
 * client set more than four, its last four are kept. As with OpenAI,
 * `prompt_cache_options.mode: "explicit"` leaves only the client's marks,
 * and a lifetime asked of the cache (`ttl` 30m or 12h, or the older
 * `prompt_cache_retention: "24h"`) is Anthropic's longest, one hour, on
 * every mark (Anthropic refuses a longer-lived mark after a shorter one).
 *
 * A prefix shorter than the model's minimum (1,024 tokens for most) is
 * simply not cached, at no cost. Thinking blocks cannot carry a mark: the
 * nearest block before them that can does.
 */
export function markCacheBreakpoints(body: AnthropicRequest, settings: PromptCacheSettings): void {
  const explicit = markedBlocks(body);
  for (const block of explicit.slice(0, Math.max(0, explicit.length - MAX_MARKS))) delete block.cache_control;
  if (settings.implicit) markAutomatically(body, MAX_MARKS - Math.min(explicit.length, MAX_MARKS));
  if (settings.ttl !== null || settings.retention === '24h') for (const block of allMarked(body)) block.cache_control = LONG_LIVED;
}

/** `promptCaching: "off"`: no marks at all, a client's own included (the operator's word wins). */
export function clearCacheBreakpoints(body: AnthropicRequest): void {
  for (const block of markedBlocks(body)) delete block.cache_control;
}

function markAutomatically(body: AnthropicRequest, marks: number): void {
  let left = marks;
  const { messages } = body;
  for (const index of [messages.length - 1, messages.length - 3]) {
    const message = messages[index];
    const at = message ? message.content.findLastIndex(canCarryMark) : -1;
    if (left === 0 || !message || at < 0) continue;
    const block = message.content[at] as AnthropicBlock & CacheControl;
    if (block.cache_control) continue;
    const content = [...message.content];
    content[at] = { ...block, cache_control: EPHEMERAL } as AnthropicBlock;
    messages[index] = { ...message, content };
    left--;
  }
  if (left > 0) markPrefix(body);
}

/** The end of the system prompt, else of the tools. */
function markPrefix(body: AnthropicRequest): void {
  if (body.system !== undefined) {
    const system = typeof body.system === 'string' ? [{ type: 'text' as const, text: body.system }] : body.system;
    const last = system.at(-1);
    if (last) body.system = [...system.slice(0, -1), { ...last, cache_control: EPHEMERAL }];
  } else if (body.tools?.length) {
    const last = body.tools.length - 1;
    body.tools = body.tools.map((tool, index) => (index === last ? { ...tool, cache_control: EPHEMERAL } : tool));
  }
}

/** Every mark: tools, system and messages. */
function allMarked(body: AnthropicRequest): CacheControl[] {
  return [...(body.tools ?? []).filter((tool) => tool.cache_control), ...markedBlocks(body)];
}

/** The blocks of the system prompt and the messages that carry a mark, in prompt order, those inside tool results included. */
function markedBlocks(body: AnthropicRequest): CacheControl[] {
  const marked: CacheControl[] = typeof body.system === 'string' ? [] : (body.system ?? []).filter((block) => block.cache_control);
  const visit = (block: AnthropicBlock) => {
    if (block.type === 'tool_result' && Array.isArray(block.content)) block.content.forEach(visit);
    if ('cache_control' in block && block.cache_control) marked.push(block);
  };
  for (const message of body.messages) message.content.forEach(visit);
  return marked;
}

function canCarryMark(block: AnthropicBlock): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}
