import { describe, expect, it } from 'vitest';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { convertToAnthropicRequest, JSON_OBJECT_INSTRUCTION } from '../../src/providers/anthropic/convert-to-anthropic-request.ts';
import { encodeRedactedThinking, encodeThinking } from '../../src/providers/anthropic/reasoning-blocks.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { turnRequest } from '../support/turn-request.ts';

const turn = (overrides: Partial<TurnRequest> = {}): TurnRequest => turnRequest({ model: 'claude-sonnet-4-5', ...overrides });
// Prompt-cache marks are tested on their own below; the rest reads clearer without them.
const options = { defaultMaxTokens: 4096, promptCaching: 'off' as const };
const items = (input: unknown[]): InputItem[] => CreateResponseRequest.parse({ input }).input as InputItem[];
const tools = [
  { type: 'function' as const, name: 'f', description: 'does f', parameters: { type: 'object', properties: { a: { type: 'number' } } } },
  { type: 'function' as const, name: 'g' },
];

describe('convertToAnthropicRequest', () => {
  it('a minimal request: model, the default max_tokens, one user text block, streaming', () => {
    expect(convertToAnthropicRequest(turn(), options)).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 4096, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  });

  it('instructions and system/developer messages become the top-level system, in order', () => {
    const body = convertToAnthropicRequest(turn({ instructions: 'Be brief.', items: items([{ role: 'system', content: 'sys' }, { role: 'developer', content: [{ type: 'input_text', text: 'dev' }] }, { role: 'user', content: 'hi' }]) }), options);
    expect(body.system).toBe('Be brief.\n\nsys\n\ndev');
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('merges consecutive same-role turns and never sends empty text', () => {
    const body = convertToAnthropicRequest(turn({ items: items([{ role: 'user', content: 'a' }, { role: 'user', content: '' }, { role: 'user', content: [{ type: 'input_text', text: 'b' }] }, { role: 'assistant', content: '' }, { role: 'assistant', content: 'c' }]) }), options);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
    ]);
  });

  it('calls become tool_use; all outputs of the turn open one user message as tool_results, errors flagged', () => {
    const body = convertToAnthropicRequest(
      turn({
        items: items([
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
          { type: 'function_call', call_id: 'c2', name: 'g', arguments: '' },
          { type: 'function_call_output', call_id: 'c1', output: '42' },
          { role: 'user', content: 'and?' },
          { type: 'function_call_output', call_id: 'c2', output: '{"error":"boom"}' },
        ]),
      }),
      options,
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'c2', name: 'g', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '42' },
          { type: 'tool_result', tool_use_id: 'c2', content: '{"error":"boom"}', is_error: true },
          { type: 'text', text: 'and?' },
        ],
      },
    ]);
  });

  it("call ids other upstreams made (Kimi's functions.f:0) are made what Claude takes, the same on the call and its result, and every time", () => {
    const body = convertToAnthropicRequest(
      turn({ items: items([{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'functions.f:0', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'functions.f:0', output: '42' }]) }),
      options,
    );
    const [, call, result] = body.messages as any[];
    const id = call.content[0].id;
    expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(id).toMatch(/^functions_f_0_/);
    expect(result.content[0].tool_use_id).toBe(id);
    // Ids that differ only where they were unsafe stay apart.
    const other = convertToAnthropicRequest(turn({ items: items([{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'functions_f:0', name: 'f', arguments: '{}' }]) }), options);
    expect((other.messages[1]!.content[0] as any).id).not.toBe(id);
    expect(convertToAnthropicRequest(turn({ items: items([{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'functions.f:0', name: 'f', arguments: '{}' }]) }), options).messages[1]!.content[0]).toMatchObject({ id });
  });

  it('call ids a server repeats across turns (every first call call_0) are told apart, each result going to its own call', () => {
    const body = convertToAnthropicRequest(
      turn({
        items: items([
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'call_0', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_0', output: 'one' },
          { type: 'function_call', call_id: 'call_0', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_0', output: 'two' },
        ]),
      }),
      options,
    );
    const uses = body.messages.flatMap((message) => message.content.filter((block) => block.type === 'tool_use').map((block: any) => block.id));
    const results = body.messages.flatMap((message) => message.content.filter((block) => block.type === 'tool_result').map((block: any) => [block.tool_use_id, block.content]));
    expect(uses).toEqual(['call_0', 'call_0_2']);
    expect(results).toEqual([['call_0', 'one'], ['call_0_2', 'two']]);
  });

  it('images from data URLs and URLs, files as documents', () => {
    const body = convertToAnthropicRequest(
      turn({
        items: items([
          {
            role: 'user',
            content: [
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
              { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
              { type: 'input_file', file_url: 'https://example.com/b.pdf' },
            ],
          },
        ]),
      }),
      options,
    );
    expect(body.messages[0]!.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/b.pdf' } },
    ]);
  });

  it("inline images as their bytes are, in any data URL spelling; a type Claude cannot read is a 400 naming the part", () => {
    const png = 'iVBORw0KGgoAAAANSUhEUg==';
    const jpeg = '/9j/4AAQSkZJRgABAQ==';
    const sent = (urls: string[]) =>
      convertToAnthropicRequest(turn({ items: items([{ role: 'user', content: urls.map((image_url) => ({ type: 'input_image', image_url })) }]) }), options).messages[0]!.content.map((block: any) => block.source);
    expect(sent([`data:IMAGE/PNG;BASE64,${png}`, `data:image/png;charset=utf-8;base64,${png}`, `data:image/png;base64, ${png.slice(0, 8)}\n${png.slice(8)}`])).toEqual(Array(3).fill({ type: 'base64', media_type: 'image/png', data: png }));
    // Declared as PNG (or as image/jpg, which Claude does not take), the bytes are JPEG: Claude is told what they are.
    expect(sent([`data:image/png;base64,${jpeg}`, `data:image/jpg;base64,${jpeg}`])).toEqual(Array(2).fill({ type: 'base64', media_type: 'image/jpeg', data: jpeg }));
    // Percent-encoded, without ;base64.
    const percentEncoded = [...Buffer.from(png, 'base64')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    expect(sent([`data:image/png,${percentEncoded}`])).toEqual([{ type: 'base64', media_type: 'image/png', data: png }]);
    expect(() => sent(['data:image/tiff;base64,SUkqAA=='])).toThrow(expect.objectContaining({ status: 400, code: 'invalid_image_format', param: 'input[0].content[0].image_url' }));
  });

  it('tools, every tool_choice, parallel_tool_calls: false, allowed_tools by filtering', () => {
    expect(convertToAnthropicRequest(turn({ tools, toolChoice: 'auto' }), options)).toMatchObject({
      tools: [{ name: 'f', description: 'does f', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }, { name: 'g', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'auto' },
    });
    expect(convertToAnthropicRequest(turn({ tools, toolChoice: 'required' }), options).tool_choice).toEqual({ type: 'any' });
    expect(convertToAnthropicRequest(turn({ tools, toolChoice: 'none' }), options).tool_choice).toEqual({ type: 'none' });
    expect(convertToAnthropicRequest(turn({ tools, toolChoice: { type: 'function', name: 'g' } }), options).tool_choice).toEqual({ type: 'tool', name: 'g' });
    expect(convertToAnthropicRequest(turn({ tools, parallelToolCalls: false }), options).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    const allowed = convertToAnthropicRequest(turn({ tools, toolChoice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'g' }] } }), options);
    expect(allowed.tools!.map((tool) => tool.name)).toEqual(['g']);
    expect(allowed.tool_choice).toEqual({ type: 'any' });
    expect(convertToAnthropicRequest(turn(), options)).not.toHaveProperty('tool_choice');
  });

  it('json_object (and json_schema without a schema) has no native form: the model is told in the system prompt, after the instructions', () => {
    const jsonMode = convertToAnthropicRequest(turn({ instructions: 'Be brief.', textFormat: { type: 'json_object' } }), options);
    expect(jsonMode.system).toBe(`Be brief.\n\n${JSON_OBJECT_INSTRUCTION}`);
    expect(jsonMode).not.toHaveProperty('output_config');
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'p' } }), options).system).toBe(JSON_OBJECT_INSTRUCTION);
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'p', schema: { type: 'object' } } }), options)).not.toHaveProperty('system');
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'text' } }), options)).not.toHaveProperty('system');
  });

  it('json_schema output, max_output_tokens, effort → thinking with room for the answer', () => {
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'p', schema: { type: 'object' } } }), options).output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } } });
    // The format's description, which output_config has no field for, goes in the schema (one of the schema's own stays).
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'p', description: 'A person.', schema: { type: 'object' } } }), options).output_config).toEqual({ format: { type: 'json_schema', schema: { description: 'A person.', type: 'object', additionalProperties: false } } });
    expect(convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'p', description: 'A person.', schema: { type: 'object', description: 'Own.' } } }), options).output_config).toMatchObject({ format: { schema: { description: 'Own.' } } });
    expect(convertToAnthropicRequest(turn({ maxOutputTokens: 300 }), options).max_tokens).toBe(300);
    // Without a cap of the client's, the budget gets the default room for the answer on top.
    const uncapped = convertToAnthropicRequest(turn({ reasoningEffort: 'medium' }), options);
    expect(uncapped.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(uncapped.max_tokens).toBe(8192 + 4096);
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'none' }), options)).not.toHaveProperty('thinking');
  });

  it("max_output_tokens bounds thinking and answer together, as OpenAI counts it: thinking takes at most half, none below Anthropic's least budget", () => {
    const roomy = convertToAnthropicRequest(turn({ reasoningEffort: 'medium', maxOutputTokens: 20_000 }), options);
    expect(roomy).toMatchObject({ max_tokens: 20_000, thinking: { type: 'enabled', budget_tokens: 8192 } });
    const tight = convertToAnthropicRequest(turn({ reasoningEffort: 'medium', maxOutputTokens: 4000 }), options);
    expect(tight).toMatchObject({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 } });
    for (const cap of [16, 500, 2047]) {
      const tiny = convertToAnthropicRequest(turn({ reasoningEffort: 'low', maxOutputTokens: cap }), options);
      expect(tiny.max_tokens).toBe(cap);
      expect(tiny).not.toHaveProperty('thinking');
    }
  });

  it("a budget that would take max_tokens past the model's own ceiling (the Models API's, else Opus 4's 32,000) gives way to the answer's room", () => {
    for (const [maxTokens, ceiling] of [[null, 32_000], [64_000, 64_000], [20_000, 20_000]] as const) {
      const body = convertToAnthropicRequest(turn({ reasoningEffort: 'max' }), { ...options, thinking: { thinks: true, adaptive: false, efforts: [], maxTokens } });
      expect(body.max_tokens).toBe(Math.min(48_000 + 4096, ceiling));
      const thinking = body.thinking as { budget_tokens: number };
      expect(thinking.budget_tokens).toBeLessThan(body.max_tokens);
      expect(thinking.budget_tokens).toBe(Math.min(48_000, body.max_tokens - 4096));
    }
    // Below the ceiling, nothing changes.
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'high' }), { ...options, thinking: { thinks: true, adaptive: false, efforts: [], maxTokens: 32_000 } })).toMatchObject({ max_tokens: 16_384 + 4096, thinking: { budget_tokens: 16_384 } });
  });

  it("reasoning.effort for a model the Models API says does not think is a 400 naming it, as OpenAI answers it for a model that does not reason", () => {
    const none = { ...options, thinking: { thinks: false, adaptive: false, efforts: [], maxTokens: 8192 } };
    expect(() => convertToAnthropicRequest(turn({ reasoningEffort: 'low' }), none)).toThrow(expect.objectContaining({ status: 400, param: 'reasoning.effort', code: 'unsupported_parameter' }));
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'none' }), none)).not.toHaveProperty('thinking');
    expect(convertToAnthropicRequest(turn(), none)).not.toHaveProperty('thinking');
  });

  it('a model that thinks adaptively (Claude 4.6 and later) gets thinking {type: adaptive} and reasoning.effort as the nearest effort it takes, never a budget', () => {
    const adaptive = { ...options, thinking: { thinks: true, adaptive: true, efforts: ['low', 'medium', 'high', 'xhigh'] as const, maxTokens: 20_000 } };
    const body = convertToAnthropicRequest(turn({ model: 'claude-opus-4-7', reasoningEffort: 'max' }), adaptive);
    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.output_config).toEqual({ effort: 'xhigh' });
    // Room for thinking beside the answer, as the budget would have left, within the model's own ceiling.
    expect(body.max_tokens).toBe(20_000);
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'minimal' }), adaptive)).toMatchObject({ output_config: { effort: 'low' }, max_tokens: 1024 + 4096 });
    // A summary asked for: its thinking is shown summarized (newer models omit it otherwise).
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'low', reasoningSummary: 'auto' }), adaptive).thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    // Beside structured output, one output_config holds both.
    const structured = convertToAnthropicRequest(turn({ reasoningEffort: 'high', textFormat: { type: 'json_schema', name: 'p', schema: { type: 'object' } } }), adaptive);
    expect(structured.output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } }, effort: 'high' });
    // The client's cap stands; a forced tool or no effort goes without thinking, as with a budget.
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'high', maxOutputTokens: 9000 }), adaptive)).toMatchObject({ max_tokens: 9000, thinking: { type: 'adaptive' } });
    const forced = convertToAnthropicRequest(turn({ tools, toolChoice: 'required', reasoningEffort: 'high' }), adaptive);
    expect(forced).not.toHaveProperty('thinking');
    expect(forced).not.toHaveProperty('output_config');
    expect(convertToAnthropicRequest(turn(), adaptive)).not.toHaveProperty('thinking');
    // A model that takes no effort parameter gets adaptive thinking alone.
    expect(convertToAnthropicRequest(turn({ reasoningEffort: 'high' }), { ...options, thinking: { thinks: true, adaptive: true, efforts: [], maxTokens: null } })).not.toHaveProperty('output_config');
    expect(() => convertToAnthropicRequest(turn({ reasoningEffort: 'high', temperature: 0.2 }), adaptive)).toThrow(/temperature/);
  });

  it('a forced tool (required, a named function, allowed_tools required) goes without thinking, which Claude cannot do while forced; auto keeps it', () => {
    for (const toolChoice of ['required', { type: 'function', name: 'g' }, { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'g' }] }] as TurnRequest['toolChoice'][]) {
      const body = convertToAnthropicRequest(turn({ tools, toolChoice, reasoningEffort: 'high' }), options);
      expect(body.tool_choice).toMatchObject({ type: expect.stringMatching(/^(any|tool)$/) });
      expect(body).not.toHaveProperty('thinking');
    }
    expect(convertToAnthropicRequest(turn({ tools, toolChoice: 'auto', reasoningEffort: 'high' }), options).thinking).toEqual({ type: 'enabled', budget_tokens: 16_384 });
  });

  it('temperature, or top_p below 0.95, beside reasoning.effort is a 400 naming it (Claude thinks at its own sampling); alone, or at the values thinking allows, they pass', () => {
    const refusal = (overrides: Partial<TurnRequest>) => {
      try {
        convertToAnthropicRequest(turn({ reasoningEffort: 'low', ...overrides }), options);
      } catch (error) {
        return error as { status: number; param: string; code: string };
      }
      return null;
    };
    expect(refusal({ temperature: 0.2 })).toMatchObject({ status: 400, param: 'temperature', code: 'unsupported_parameter' });
    expect(refusal({ topP: 0.5 })).toMatchObject({ status: 400, param: 'top_p', code: 'unsupported_parameter' });
    expect(refusal({ temperature: 1, topP: 0.97 })).toBeNull();
    expect(convertToAnthropicRequest(turn({ temperature: 0.2, topP: 0.5 }), options)).toMatchObject({ temperature: 0.2, top_p: 0.5 });
  });

  it('a tool turn begun without thinking (a forced tool, another provider, a client that dropped the block) goes on without it; one begun with it keeps it', () => {
    const bare = items([{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: '42' }]);
    expect(convertToAnthropicRequest(turn({ tools, items: bare, reasoningEffort: 'low' }), options)).not.toHaveProperty('thinking');
    const thought = items([
      { role: 'user', content: 'go' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeThinking('Call f.', 'sig') },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '42' },
    ]);
    expect(convertToAnthropicRequest(turn({ tools, items: thought, reasoningEffort: 'low' }), options).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // Once the model answered, the next user message starts a new turn: thinking as asked.
    const next = items([{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: '42' }, { role: 'assistant', content: 'It is 42.' }, { role: 'user', content: 'and now?' }]);
    expect(convertToAnthropicRequest(turn({ tools, items: next, reasoningEffort: 'low' }), options).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('token log probabilities, which Claude never gives, are a 400 naming what asked for them', () => {
    expect(() => convertToAnthropicRequest(turn({ logprobs: true, topLogprobs: 3 }), options)).toThrow(expect.objectContaining({ status: 400, param: 'top_logprobs', code: 'unsupported_parameter' }));
    expect(() => convertToAnthropicRequest(turn({ logprobs: true, topLogprobs: null }), options)).toThrow(expect.objectContaining({ status: 400, param: 'include', code: 'unsupported_parameter' }));
  });

  it('repetition penalties, which Claude has none of, are a 400 naming the one asked for; 0 (the default) asks nothing', () => {
    expect(() => convertToAnthropicRequest(turn({ presencePenalty: 1.5 }), options)).toThrow(expect.objectContaining({ status: 400, param: 'presence_penalty', code: 'unsupported_parameter' }));
    expect(() => convertToAnthropicRequest(turn({ frequencyPenalty: -0.5 }), options)).toThrow(expect.objectContaining({ status: 400, param: 'frequency_penalty', code: 'unsupported_parameter' }));
    expect(convertToAnthropicRequest(turn({ presencePenalty: 0, frequencyPenalty: 0 }), options)).not.toHaveProperty('presence_penalty');
  });

  it("schemas Claude enforces (structured output, strict tools) carry only what it can enforce; the rest moves into the description, objects are closed; other tools' schemas go as they are", () => {
    // What the OpenAI SDK's zodTextFormat makes of z.object({ qty: z.number().int(), sku: z.string().min(3), tags: z.array(z.string()).min(2), at: z.string().datetime() }).
    const zodSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        qty: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        sku: { type: 'string', minLength: 3, description: 'Stock unit.' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        one: { type: 'array', items: { type: 'string' }, minItems: 1 },
        at: { type: 'string', format: 'date-time' },
        kind: { oneOf: [{ type: 'string', pattern: '^a' }, { type: 'null' }] },
      },
      required: ['qty', 'sku', 'tags', 'one', 'at', 'kind'],
      additionalProperties: false,
    };
    const claudeSchema = {
      type: 'object',
      properties: {
        qty: { type: 'integer', description: '{minimum: -9007199254740991, maximum: 9007199254740991}' },
        sku: { type: 'string', description: 'Stock unit.\n\n{minLength: 3}' },
        tags: { type: 'array', items: { type: 'string' }, description: '{minItems: 2}' },
        one: { type: 'array', items: { type: 'string' }, minItems: 1 },
        at: { type: 'string', format: 'date-time' },
        kind: { anyOf: [{ type: 'string', description: '{pattern: "^a"}' }, { type: 'null' }] },
      },
      required: ['qty', 'sku', 'tags', 'one', 'at', 'kind'],
      additionalProperties: false,
    };
    const structured = convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'order', schema: zodSchema, strict: true } }), options);
    expect(structured.output_config).toEqual({ format: { type: 'json_schema', schema: claudeSchema } });
    const strictTool = { type: 'function' as const, name: 'order', parameters: zodSchema, strict: true };
    const looseTool = { type: 'function' as const, name: 'loose', parameters: zodSchema, strict: false };
    const body = convertToAnthropicRequest(turn({ tools: [strictTool, looseTool] }), options);
    expect(body.tools).toEqual([
      { name: 'order', input_schema: claudeSchema, strict: true },
      { name: 'loose', input_schema: zodSchema, strict: false },
    ]);
    // An open object is closed, as Claude requires; what it allowed is said in the description.
    const open = convertToAnthropicRequest(turn({ textFormat: { type: 'json_schema', name: 'o', schema: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } } }), options);
    expect(open.output_config!.format!.schema).toEqual({ type: 'object', properties: {}, additionalProperties: false, description: '{additionalProperties: {"type":"string"}}' });
  });

  it('files by kind: a PDF as a base64 document, text files as plain-text documents, an image file as an image, anything else a 400 naming the file', () => {
    const base64 = (text: string) => Buffer.from(text).toString('base64');
    const file = (mediaType: string, text: string, filename?: string) => ({ type: 'input_file', ...(filename && { filename }), file_data: `data:${mediaType};base64,${base64(text)}` });
    const body = convertToAnthropicRequest(
      turn({
        items: items([
          { role: 'user', content: [file('text/plain', 'notes ✓', 'notes.txt'), file('text/csv', 'a,b\n1,2'), file('application/json', '{"a":1}'), { type: 'input_file', file_data: 'data:image/png;base64,iVBORw0KGgo=' }] },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: [file('text/markdown', '# Title')] },
        ]),
      }),
      options,
    );
    expect(body.messages[0]!.content).toEqual([
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes ✓' }, title: 'notes.txt' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a,b\n1,2' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: '{"a":1}' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ]);
    expect(body.messages[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: '# Title' } }] }]);
    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    expect(() => convertToAnthropicRequest(turn({ items: items([{ role: 'user', content: [{ type: 'input_text', text: 'read' }, file(docx, 'PK')] }]) }), options)).toThrow(
      expect.objectContaining({ status: 400, param: 'input[0].content[1].file_data', code: 'unsupported_file_type', message: expect.stringContaining(docx) }),
    );
  });

  it('thinking and redacted thinking go back byte for byte, before the tool_use of their turn', () => {
    const signature = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/+=';
    const body = convertToAnthropicRequest(
      turn({
        items: items([
          { role: 'user', content: 'q' },
          { type: 'reasoning', summary: [], encrypted_content: encodeThinking('Let me think. ✓', signature) },
          { type: 'reasoning', summary: [], encrypted_content: encodeRedactedThinking('Ejx0cGF8aGlkZGVu') },
          { type: 'reasoning', summary: [], encrypted_content: 'gAAAA-openai-encrypted' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ]),
      }),
      options,
    );
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me think. ✓', signature },
        { type: 'redacted_thinking', data: 'Ejx0cGF8aGlkZGVu' },
        { type: 'tool_use', id: 'c1', name: 'f', input: {} },
      ],
    });
  });

  describe('prompt-cache marks (promptCaching: auto, the default)', () => {
    const cached = { defaultMaxTokens: 4096 };
    const marked = (body: ReturnType<typeof convertToAnthropicRequest>) =>
      body.messages.flatMap((message, index) => message.content.flatMap((block, at) => ('cache_control' in block && block.cache_control ? [`${index}.${at}:${block.type}`] : [])));

    it('an agentic loop: the system prompt, the last message and the message two before it, which the previous call marked last', () => {
      const loop = items([
        { role: 'user', content: 'find it' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' },
        { type: 'function_call', call_id: 'c3', name: 'g', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: 'two' },
        { type: 'function_call_output', call_id: 'c3', output: 'three' },
      ]);
      const body = convertToAnthropicRequest(turn({ instructions: 'Be brief.', tools, items: loop }), cached);
      expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
      // The tools come before the system prompt in what Anthropic caches: the system's mark covers them.
      expect(body.tools!.some((tool) => 'cache_control' in tool)).toBe(false);
      expect(marked(body)).toEqual(['2.0:tool_result', '4.1:tool_result']);
      // The previous call (one turn shorter) marked its own last message, the one this call marks two before its end.
      const previous = convertToAnthropicRequest(turn({ instructions: 'Be brief.', tools, items: loop.slice(0, 3) }), cached);
      expect(marked(previous)).toEqual(['0.0:text', '2.0:tool_result']);
    });

    it('without a system prompt the last tool is marked; a message ending in thinking is marked on the block before it; a short conversation gets one mark', () => {
      const body = convertToAnthropicRequest(turn({ tools, items: items([{ role: 'user', content: 'hi' }]) }), cached);
      expect(body.system).toBeUndefined();
      expect(body.tools!.map((tool) => tool.cache_control ?? null)).toEqual([null, { type: 'ephemeral' }]);
      expect(marked(body)).toEqual(['0.0:text']);
      const thinkingLast = convertToAnthropicRequest(
        turn({ items: items([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }, { type: 'reasoning', summary: [], encrypted_content: encodeThinking('hm', 'sig') }]) }),
        cached,
      );
      expect(thinkingLast.messages.at(-1)!.content.map((block) => block.type)).toEqual(['text', 'thinking']);
      expect(marked(thinkingLast)).toEqual(['1.0:text']);
    });

    it("a client's own breakpoints (OpenAI's prompt_cache_breakpoint) are marks too; the automatic ones fill what is left of Anthropic's four", () => {
      const breakpoint = { mode: 'explicit', ttl: '12h' };
      const marksOf = (body: ReturnType<typeof convertToAnthropicRequest>) => JSON.stringify(body).split('cache_control').length - 1;
      const one = convertToAnthropicRequest(
        turn({
          instructions: 'sys',
          items: items([
            { role: 'user', content: [{ type: 'input_text', text: 'a long document', prompt_cache_breakpoint: breakpoint }, { type: 'input_text', text: 'question 1' }] },
            { role: 'assistant', content: 'answer 1' },
            { role: 'user', content: 'question 2' },
          ]),
        }),
        cached,
      );
      // The client's mark, then the last message, the message two before it and the system prompt: four.
      expect(marked(one)).toEqual(['0.0:text', '0.1:text', '2.0:text']);
      expect(one.system).toEqual([{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);
      expect(marksOf(one)).toBe(4);
      // The client's two fall where the automatic message marks would: with the system prompt's, three.
      const two = convertToAnthropicRequest(
        turn({ instructions: 'sys', items: items([{ role: 'user', content: [{ type: 'input_text', text: 'doc', prompt_cache_breakpoint: breakpoint }] }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'input_text', text: 'q', prompt_cache_breakpoint: { mode: 'explicit' } }] }]) }),
        cached,
      );
      expect(marked(two)).toEqual(['0.0:text', '2.0:text']);
      expect(marksOf(two)).toBe(3);
      expect(two.system).toEqual([{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);

      const many = items([{ role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map((text) => ({ type: 'input_text', text, prompt_cache_breakpoint: breakpoint })) }, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'f', prompt_cache_breakpoint: breakpoint }] }]);
      const crowded = convertToAnthropicRequest(turn({ instructions: 'sys', items: many }), cached);
      // Six asked for: the last four are kept, in prompt order; nothing automatic is added.
      expect(marksOf(crowded)).toBe(4);
      expect(crowded.messages[0]!.content.map((block) => 'cache_control' in block)).toEqual([false, false, true, true, true]);
      expect(crowded.messages[2]!.content[0]).toMatchObject({ type: 'tool_result', content: [{ type: 'text', text: 'f', cache_control: { type: 'ephemeral' } }] });
      expect(crowded.system).toBe('sys');
    });

    it("a breakpoint the client set on a system or developer message marks the system prompt there (an explicit-only client's static prompt is cached); unmarked, the system prompt stays one text", () => {
      const conversation = items([
        { role: 'developer', content: [{ type: 'input_text', text: 'a long static prompt', prompt_cache_breakpoint: { mode: 'explicit' } }] },
        { role: 'developer', content: 'today is Friday' },
        { role: 'user', content: 'q' },
      ]);
      const explicitOnly = convertToAnthropicRequest(turn({ instructions: 'sys', items: conversation, promptCache: { implicit: false, ttl: null, retention: null } }), cached);
      expect(explicitOnly.system).toEqual([
        { type: 'text', text: 'sys' },
        { type: 'text', text: 'a long static prompt', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'today is Friday' },
      ]);
      expect(marked(explicitOnly)).toEqual([]);
      // The automatic marks fill in beside it: the last message, and the end of the system prompt.
      const implicit = convertToAnthropicRequest(turn({ instructions: 'sys', items: conversation }), cached);
      expect((implicit.system as { cache_control?: unknown }[]).map((block) => 'cache_control' in block)).toEqual([false, true, true]);
      expect(marked(implicit)).toEqual(['0.0:text']);
      expect(convertToAnthropicRequest(turn({ instructions: 'sys', items: conversation }), { defaultMaxTokens: 4096, promptCaching: 'off' }).system).toEqual([{ type: 'text', text: 'sys' }, { type: 'text', text: 'a long static prompt' }, { type: 'text', text: 'today is Friday' }]);
    });

    it("the client's prompt_cache_options: mode explicit leaves only its own marks; a lifetime asked for makes every mark Anthropic's hour", () => {
      const conversation = items([{ role: 'user', content: [{ type: 'input_text', text: 'doc', prompt_cache_breakpoint: { mode: 'explicit' } }, { type: 'input_text', text: 'q' }] }]);
      const explicitOnly = convertToAnthropicRequest(turn({ instructions: 'sys', items: conversation, promptCache: { implicit: false, ttl: null, retention: null } }), cached);
      expect(marked(explicitOnly)).toEqual(['0.0:text']);
      expect(explicitOnly.system).toBe('sys');
      const none = convertToAnthropicRequest(turn({ instructions: 'sys', promptCache: { implicit: false, ttl: null, retention: null } }), cached);
      expect(JSON.stringify(none)).not.toContain('cache_control');
      for (const promptCache of [{ implicit: true, ttl: '12h' as const, retention: null }, { implicit: true, ttl: null, retention: '24h' as const }]) {
        const body = convertToAnthropicRequest(turn({ instructions: 'sys', tools, items: conversation, promptCache }), cached);
        const marks = JSON.stringify(body).match(/"cache_control":\{[^}]*\}/g);
        expect(marks).toEqual(['"cache_control":{"type":"ephemeral","ttl":"1h"}', '"cache_control":{"type":"ephemeral","ttl":"1h"}', '"cache_control":{"type":"ephemeral","ttl":"1h"}']);
      }
    });

    it("promptCaching: off sends no marks, not even the client's, and the system prompt as a string", () => {
      const withBreakpoint = items([{ role: 'user', content: [{ type: 'input_text', text: 'doc', prompt_cache_breakpoint: { mode: 'explicit' } }] }]);
      const body = convertToAnthropicRequest(turn({ instructions: 'Be brief.', tools, items: withBreakpoint }), { defaultMaxTokens: 4096, promptCaching: 'off' });
      expect(body.system).toBe('Be brief.');
      // Not even the client's own: the operator turned caching off for this upstream.
      expect(JSON.stringify(body)).not.toContain('cache_control');
    });
  });
});
