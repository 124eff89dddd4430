import type { HostedCallInputItem, InputItem } from '../protocol/input-items.ts';
import { isHostedCallItemType } from '../protocol/hosted-tools.ts';

/**
 * Whether `item` is a hosted tool call another upstream ran (`web_search_call`,
 * …). Only an OpenAI Responses upstream takes such items back; the others
 * (Chat Completions, Anthropic, Gemini) pass over them, as they pass over
 * another provider's reasoning: the model that continues the conversation
 * still sees what the call found, in the answer that followed it.
 */
export function isHostedCallItem(item: InputItem): item is HostedCallInputItem {
  return isHostedCallItemType(item.type);
}
