import { describe, expect, it } from 'vitest';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { convertToAnthropicRequest } from '../../src/providers/anthropic/convert-to-anthropic-request.ts';
import { convertToGeminiRequest } from '../../src/providers/gemini/convert-to-gemini-request.ts';
import { convertToChatRequest } from '../../src/providers/openai-chat/convert-to-chat-request.ts';
import { convertToResponsesRequest } from '../../src/providers/openai-responses/convert-to-responses-request.ts';
import { boundTurnTokens } from '../../src/engine/token-estimate.ts';
import { turnRequest } from '../support/turn-request.ts';

/** Every field as OpenAI reported it, some the gateway has no name for. */
const searchCall = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q', sources: [{ type: 'url', url: 'https://example.com' }] }, extra: { kept: true } };
const history = CreateResponseRequest.parse({
  input: [
    { role: 'user', content: 'Search it.' },
    searchCall,
    { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'iVBORw0KGgo=' },
    { role: 'assistant', content: [{ type: 'output_text', text: 'Found it.', annotations: [{ type: 'url_citation', url: 'https://example.com', title: 't', start_index: 0, end_index: 5 }] }] },
    { role: 'user', content: 'Thanks.' },
  ],
}).input as InputItem[];
const request = turnRequest({ items: history });

describe('hosted call items in the history', () => {
  it('go back to a Responses upstream whole, unknown fields included; the id only to an upstream that stores (a stateless one never kept it)', () => {
    const body = convertToResponsesRequest(request, { upstreamStore: false, encryptedReasoning: false, nativeCustomTools: true });
    const { id: _id, ...withoutId } = searchCall;
    expect(body.input[1]).toEqual(withoutId);
    expect(convertToResponsesRequest(request, { upstreamStore: true, encryptedReasoning: false, nativeCustomTools: true }).input[1]).toEqual(searchCall);
    expect(body.input.map((item) => item.type)).toEqual(['message', 'web_search_call', 'image_generation_call', 'message', 'message']);
  });

  it('are left out for Chat Completions, Anthropic and Gemini upstreams, the answer that followed them kept', () => {
    expect(convertToChatRequest(request, { maxTokensField: 'max_completion_tokens' }).messages.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'Search it.'],
      ['assistant', 'Found it.'],
      ['user', 'Thanks.'],
    ]);
    expect(convertToAnthropicRequest({ ...request, model: 'claude' }, { defaultMaxTokens: 100 }).messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(convertToGeminiRequest(request).contents.map((content) => content.role)).toEqual(['user', 'model', 'user']);
  });

  it('hosted tools the turn carries are sent after the function tools, as the client named them', () => {
    const webSearch = { type: 'web_search' as const, search_context_size: 'low' as const, future_field: 1 };
    const body = convertToResponsesRequest(turnRequest({ tools: [{ type: 'function', name: 'f' }], hostedTools: [webSearch], hostedInclude: ['web_search_call.action.sources'], toolChoice: 'auto' }), { upstreamStore: false, encryptedReasoning: true, nativeCustomTools: true });
    expect(body.tools).toEqual([{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }, webSearch]);
    expect(body.include).toEqual(['reasoning.encrypted_content', 'web_search_call.action.sources']);
    expect(body.tool_choice).toBe('auto');
  });

  it('are counted in the gateway\'s estimate, like the hosted tools themselves (a generated image not as its base64 text)', () => {
    const measured = boundTurnTokens(request);
    expect(measured.items[1]).toBeGreaterThan(JSON.stringify(searchCall).length);
    const image = boundTurnTokens(turnRequest({ items: [{ type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'x'.repeat(10_000) }] }));
    expect(image.items[0]).toBeLessThan(100);
    const bare = boundTurnTokens(turnRequest());
    const offered = boundTurnTokens(turnRequest({ hostedTools: [{ type: 'web_search' }] }));
    expect(offered.fixed - bare.fixed).toBe(JSON.stringify([{ type: 'web_search' }]).length);
  });
});
