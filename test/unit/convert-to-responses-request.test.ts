import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { encodeThinking } from '../../src/providers/anthropic/reasoning-blocks.ts';
import { convertToResponsesRequest, isOpenAIReasoning } from '../../src/providers/openai-responses/convert-to-responses-request.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { turnRequest } from '../support/turn-request.ts';

const turn = (overrides: Partial<TurnRequest> = {}): TurnRequest => turnRequest({ model: 'gpt-5', ...overrides });
const stateless = { upstreamStore: false, encryptedReasoning: true, nativeCustomTools: true };
const items = (input: unknown[]): InputItem[] => CreateResponseRequest.parse({ input }).input as InputItem[];

describe('convertToResponsesRequest', () => {
  it('a minimal request is stateless and asks for encrypted reasoning', () => {
    expect(convertToResponsesRequest(turn(), stateless)).toEqual({
      model: 'gpt-5',
      input: [{ type: 'message', role: 'user', content: 'hi' }],
      stream: false,
      store: false,
      include: ['reasoning.encrypted_content'],
    });
  });

  it('truncation: auto goes upstream too (OpenAI truncates by itself; its refusal names no sizes to learn a window from)', () => {
    expect(convertToResponsesRequest(turn({ truncation: 'auto' }), stateless).truncation).toBe('auto');
    expect(convertToResponsesRequest(turn(), stateless)).not.toHaveProperty('truncation');
  });

  it('upstreamStore lets the upstream keep its answers, and still asks for encrypted reasoning (the only way reasoning goes back: no upstream ids are kept)', () => {
    const body = convertToResponsesRequest(turn(), { upstreamStore: true, encryptedReasoning: true, nativeCustomTools: true });
    expect(body.store).toBe(true);
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(convertToResponsesRequest(turn(), { upstreamStore: true, encryptedReasoning: false, nativeCustomTools: true }).include).toBeUndefined();
  });

  it('maps every item kind in order, without item ids; only OpenAI\'s own encrypted reasoning goes back', () => {
    const body = convertToResponsesRequest(
      turn({
        instructions: 'Be brief.',
        items: items([
          { role: 'developer', content: [{ type: 'input_text', text: 'dev' }] },
          {
            id: 'msg_client',
            role: 'user',
            content: [
              { type: 'input_text', text: 'look' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
            ],
          },
          { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: 'gAAAAABxyz' },
          { type: 'reasoning', summary: [], encrypted_content: encodeThinking('t', 'sig') },
          { type: 'reasoning', summary: [{ type: 'summary_text', text: 'no token' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          { id: 'fc_1', type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
          { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'one' }] },
        ]),
      }),
      stateless,
    );
    expect(body.instructions).toBe('Be brief.');
    expect(body.input).toEqual([
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'dev' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' },
        ],
      },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: 'gAAAAABxyz' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'one' }] },
    ]);
  });

  it("a client's explicit prompt-cache breakpoints go on as they came, in messages (developer and system ones too) and function outputs", () => {
    const breakpoint = { mode: 'explicit', ttl: '30m' };
    const body = convertToResponsesRequest(
      turn({
        items: items([
          { role: 'developer', content: [{ type: 'input_text', text: 'static prompt', prompt_cache_breakpoint: breakpoint }] },
          { role: 'user', content: [{ type: 'input_text', text: 'doc', prompt_cache_breakpoint: breakpoint }, { type: 'input_image', image_url: 'https://x/1.png', prompt_cache_breakpoint: { mode: 'explicit' } }] },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_url: 'https://x/a.pdf', prompt_cache_breakpoint: breakpoint }] },
        ]),
      }),
      stateless,
    );
    expect(body.input).toMatchObject([
      { role: 'developer', content: [{ type: 'input_text', text: 'static prompt', prompt_cache_breakpoint: breakpoint }] },
      { content: [{ type: 'input_text', text: 'doc', prompt_cache_breakpoint: breakpoint }, { type: 'input_image', prompt_cache_breakpoint: { mode: 'explicit' } }] },
      { type: 'function_call' },
      { type: 'function_call_output', output: [{ type: 'input_file', prompt_cache_breakpoint: breakpoint }] },
    ]);
  });

  it("the client's prompt-cache settings go on as OpenAI takes them", () => {
    expect(convertToResponsesRequest(turn(), stateless)).not.toHaveProperty('prompt_cache_options');
    expect(convertToResponsesRequest(turn({ promptCache: { implicit: false, ttl: '12h', retention: '24h' } }), stateless)).toMatchObject({ prompt_cache_options: { mode: 'explicit', ttl: '12h' }, prompt_cache_retention: '24h' });
    expect(convertToResponsesRequest(turn({ promptCache: { implicit: true, ttl: '30m', retention: null } }), stateless).prompt_cache_options).toEqual({ ttl: '30m' });
  });

  it('tools, tool_choice, text format, sampling and reasoning settings use the Responses API shapes', () => {
    const body = convertToResponsesRequest(
      turn({
        stream: true,
        tools: [{ type: 'function', name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: true }],
        toolChoice: { type: 'function', name: 'lookup' },
        parallelToolCalls: false,
        textFormat: { type: 'json_schema', schema: { type: 'object' } },
        verbosity: 'low',
        maxOutputTokens: 256,
        temperature: 0.2,
        topP: 0.9,
        presencePenalty: 0.5,
        reasoningEffort: 'minimal',
        logprobs: true,
        topLogprobs: 3,
        promptCacheKey: 'k',
      }),
      stateless,
    );
    expect(body).toMatchObject({
      stream: true,
      tools: [{ type: 'function', name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: true }],
      tool_choice: { type: 'function', name: 'lookup' },
      parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'response', schema: { type: 'object' } }, verbosity: 'low' },
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'minimal' },
      include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
      top_logprobs: 3,
      prompt_cache_key: 'k',
    });
    expect(body).not.toHaveProperty('presence_penalty');
  });

  it('allowed_tools keeps its mode; parallel_tool_calls is left out without tools', () => {
    const tools = [{ type: 'function' as const, name: 'a' }];
    expect(convertToResponsesRequest(turn({ tools, toolChoice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'a' }] } }), stateless).tool_choice).toEqual({
      type: 'allowed_tools',
      mode: 'required',
      tools: [{ type: 'function', name: 'a' }],
    });
    expect(convertToResponsesRequest(turn({ parallelToolCalls: true }), stateless)).not.toHaveProperty('parallel_tool_calls');
  });

  it('video input and unresolved references are refused with the offending param', () => {
    const video = () => convertToResponsesRequest(turn({ items: items([{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_video', video_url: 'https://x/v.mp4' }] }]) }), stateless);
    expect(video).toThrow(GatewayError);
    expect(() => video()).toThrow(expect.objectContaining({ param: 'input[0].output[0].type', code: 'unsupported_parameter' }));
    expect(() => convertToResponsesRequest(turn({ items: [{ type: 'item_reference', id: 'msg_x' }] }), stateless)).toThrow(expect.objectContaining({ param: 'input[0].id', code: 'item_not_found' }));
  });
});

describe('reasoning of every other provider stays behind', () => {
  it("each prefix the gateway seals with is foreign to OpenAI, hyphens and all; OpenAI's own tokens are not", () => {
    for (const foreign of ['openrouter.reasoning-details.v1:eyJ9', 'gemini.signature.v1:eyJ9', 'loopgate.reasoning.v1:aGk=', 'anthropic.thinking.v1:eyJ9']) expect(isOpenAIReasoning(foreign)).toBe(false);
    expect(isOpenAIReasoning('gAAAAABo1x2y3z')).toBe(true);
  });
});
