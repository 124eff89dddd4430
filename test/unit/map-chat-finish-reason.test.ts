import { describe, expect, it } from 'vitest';
import { mapChatFinishReason } from '../../src/providers/openai-chat/map-chat-finish-reason.ts';

describe('Chat finish reasons', () => {
  it('calls streamed make a tool-call turn whatever the reason says (OpenAI says stop for a forced tool, TGI eos_token)', () => {
    for (const raw of [null, 'stop', 'tool_calls', 'function_call', 'eos_token']) expect(mapChatFinishReason(raw, true)).toEqual({ reason: 'tool_calls', raw });
    expect(mapChatFinishReason('tool_calls', false)).toEqual({ reason: 'stop', raw: 'tool_calls' });
  });

  it('a server that stopped the turn itself (abort, error, cancelled, interrupted) broke off its calls: no tool-call turn', () => {
    for (const raw of ['abort', 'aborted', 'error', 'cancelled', 'canceled', 'interrupted']) expect(mapChatFinishReason(raw, true)).toEqual({ reason: 'other', raw });
  });

  it('limits and filters keep their meaning, calls or not', () => {
    expect(mapChatFinishReason('length', true)).toEqual({ reason: 'length', raw: 'length' });
    expect(mapChatFinishReason('content_filter', false)).toEqual({ reason: 'content_filter', raw: 'content_filter' });
  });
});
