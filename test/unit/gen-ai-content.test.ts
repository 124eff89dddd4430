import { describe, expect, it } from 'vitest';
import { inputMessages, outputMessages, systemInstructions, toolDefinitions } from '../../src/observability/gen-ai-content.ts';
import { turnRequest } from '../support/turn-request.ts';

describe('GenAI content attributes', () => {
  it('writes the conversation as the conventions\' messages: roles, parts, tool calls and their responses', () => {
    const request = turnRequest({
      instructions: 'Be brief.',
      items: [
        { type: 'message', role: 'developer', content: 'Use metric units.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Look it up.' }] },
        { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call', call_id: 'c2', name: 'clock', arguments: 'not json' },
        { type: 'function_call_output', call_id: 'c1', output: '12 °C' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '14:00' }] },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '12 °C at 14:00.' }] },
      ] as never,
      tools: [{ type: 'function', name: 'weather', description: 'Weather now.', parameters: { type: 'object' } }],
    });
    expect(JSON.parse(systemInstructions(request)!)).toEqual([{ type: 'text', content: 'Be brief.' }]);
    expect(JSON.parse(inputMessages(request))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Use metric units.' }] },
      // The image is named, never copied.
      { role: 'user', parts: [{ type: 'text', content: 'Weather in Oslo?' }, { type: 'image' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Look it up.' },
          { type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Oslo' } },
          { type: 'tool_call', id: 'c2', name: 'clock', arguments: 'not json' },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: '12 °C' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c2', response: '14:00' }] },
      { role: 'assistant', parts: [{ type: 'text', content: '12 °C at 14:00.' }] },
    ]);
    expect(JSON.parse(toolDefinitions(request)!)).toEqual([{ type: 'function', name: 'weather', description: 'Weather now.', parameters: { type: 'object' } }]);
    expect(systemInstructions(turnRequest())).toBeNull();
    expect(toolDefinitions(turnRequest())).toBeNull();
  });

  it('writes a call\'s answer with the conventions\' finish reason', () => {
    const output = { text: 'Checking.', refusal: '', toolCalls: [{ callId: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] };
    expect(JSON.parse(outputMessages(output, { reason: 'tool_calls', raw: 'tool_use' }))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Checking.' }, { type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }], finish_reason: 'tool_call' },
    ]);
    expect(JSON.parse(outputMessages({ text: '', refusal: 'No.', toolCalls: [] }, { reason: 'content_filter', raw: 'refusal' }))[0].finish_reason).toBe('content_filter');
    expect(JSON.parse(outputMessages({ text: 'cut', refusal: '', toolCalls: [] }, null))[0].finish_reason).toBe('error');
  });
});
