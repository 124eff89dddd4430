import type { TurnFinish } from '../provider.ts';

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
      return { reason: hasToolCalls ? 'tool_calls' : 'other', raw };
  }
}
