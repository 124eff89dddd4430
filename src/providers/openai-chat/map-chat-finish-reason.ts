import type { TurnFinish } from '../provider.ts';

/** Finish reasons servers give a turn they stopped before the model finished it. */
const BROKEN_OFF = new Set(['abort', 'aborted', 'error', 'cancelled', 'canceled', 'interrupted']);

/**
 * Tool calls are recognised by whether any were streamed, never by the finish
 * reason: OpenAI says `stop` for a forced tool choice, Gemini streams `stop`
 * with calls, and vLLM can say `tool_calls` with none.
 */
export function mapChatFinishReason(raw: string | null, hasToolCalls: boolean): TurnFinish {
  switch (raw) {
    case 'length':
      return { reason: 'length', raw };
    case 'content_filter':
      return { reason: 'content_filter', raw };
    case null:
    case 'stop':
    case 'tool_calls':
    case 'function_call':
      return { reason: hasToolCalls ? 'tool_calls' : 'stop', raw };
    default:
      // A server that stopped the turn itself (vLLM's `abort`, a router's `error`) broke off the model's calls; any other reason (TGI's `eos_token`) ended them.
      return { reason: hasToolCalls && !BROKEN_OFF.has(raw) ? 'tool_calls' : 'other', raw };
  }
}
