import type { TurnFinish } from '../provider.ts';

/** Finish reasons meaning the answer was withheld or cut by a filter, the prompt's block reasons included. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'OTHER_BLOCK_REASON']);

/** Calls made, not `STOP`, mean tool calls: Gemini says `STOP` either way. */
export function mapGeminiFinishReason(raw: string, hasToolCalls: boolean): TurnFinish {
  if (raw === 'STOP') return { reason: hasToolCalls ? 'tool_calls' : 'stop', raw };
  if (raw === 'MAX_TOKENS') return { reason: 'length', raw };
  if (FILTERED.has(raw)) return { reason: 'content_filter', raw };
  return { reason: 'other', raw };
}
