import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { convertToChatRequest } from '../../src/providers/openai-chat/convert-to-chat-request.ts';
import { encodeSignature } from '../../src/providers/gemini/thought-signatures.ts';
import { ReasoningFieldChoice } from '../../src/providers/openai-chat/reasoning-field.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { turnRequest } from '../support/turn-request.ts';

const turn = (overrides: Partial<TurnRequest> = {}): TurnRequest => turnRequest({ model: 'gpt-test', ...overrides });
const options = { maxTokensField: 'max_completion_tokens' as const };
/** Earlier reasoning as it goes to a model that gave it in `reasoning_content` (and OpenRouter's details). */
const reasoningBack = { field: 'reasoning_content' as const, details: true };
const items = (input: unknown[]): InputItem[] => CreateResponseRequest.parse({ input }).input as InputItem[];

describe('convertToChatRequest', () => {
  it('a minimal request is the model and one user message, nothing else', () => {
    expect(convertToChatRequest(turn(), options)).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: false });
  });

  it('streaming asks for usage in the last chunk', () => {
    expect(convertToChatRequest(turn({ stream: true }), options)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('maps instructions, every role, content parts, calls and outputs in order', () => {
    const body = convertToChatRequest(
      turn({
        instructions: 'Be brief.',
        items: items([
          { role: 'system', content: 'sys' },
          { role: 'developer', content: [{ type: 'input_text', text: 'dev' }] },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'look' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
            ],
          },
          { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Checking.' }] },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
          { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'tw' }, { type: 'input_text', text: 'o' }] },
          { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thought' }] },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        ]),
      }),
      options,
      reasoningBack,
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'sys' },
      { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      // A reasoning item that shows only its summary (OpenAI's) goes back as that summary, to a model that takes reasoning.
      { role: 'assistant', content: null, refusal: 'No.', reasoning_content: 'thought' },
    ]);
  });

  it('tool outputs are moved right after their calls, even with a message in between', () => {
    const body = convertToChatRequest(
      turn({
        items: items([
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
          { type: 'function_call', call_id: 'b', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'a', output: 'A' },
          { role: 'user', content: 'forget it' },
          { type: 'function_call_output', call_id: 'b', output: 'B' },
        ]),
      }),
      options,
    );
    expect(body.messages.map((message: any) => message.role + (message.tool_call_id ? `:${message.tool_call_id}` : ''))).toEqual(['user', 'assistant', 'tool:a', 'tool:b', 'user']);
  });

  it('tools, tool choice forms and parallel_tool_calls (only with tools)', () => {
    const tools = [{ type: 'function' as const, name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true }, { type: 'function' as const, name: 'g' }];
    expect(convertToChatRequest(turn({ tools, toolChoice: 'required', parallelToolCalls: false }), options)).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true } },
        { type: 'function', function: { name: 'g' } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(convertToChatRequest(turn({ tools, toolChoice: { type: 'function', name: 'g' } }), options).tool_choice).toEqual({ type: 'function', function: { name: 'g' } });
    expect(convertToChatRequest(turn({ tools, toolChoice: { type: 'allowed_tools', tools: [{ type: 'function', name: 'f' }], mode: 'required' } }), options).tool_choice).toEqual({
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] },
    });
    const withoutTools = convertToChatRequest(turn({ toolChoice: 'none', parallelToolCalls: true }), options);
    expect(withoutTools).not.toHaveProperty('parallel_tool_calls');
    expect(withoutTools).not.toHaveProperty('tool_choice');
  });

  it('structured output, sampling, limits, reasoning and routing hints', () => {
    const body = convertToChatRequest(
      turn({
        textFormat: { type: 'json_schema', name: 'person', schema: { type: 'object' }, strict: true },
        verbosity: 'low',
        maxOutputTokens: 100,
        temperature: 0.2,
        topP: 0.9,
        presencePenalty: 0.1,
        frequencyPenalty: 0.3,
        reasoningEffort: 'high',
        topLogprobs: 3,
        logprobs: true,
        safetyIdentifier: 'user-1',
        promptCacheKey: 'k',
        serviceTier: 'flex',
      }),
      options,
    );
    expect(body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema: { type: 'object' }, strict: true } },
      verbosity: 'low',
      max_completion_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
      reasoning_effort: 'high',
      logprobs: true,
      top_logprobs: 3,
      safety_identifier: 'user-1',
      prompt_cache_key: 'k',
      service_tier: 'flex',
    });
    expect(convertToChatRequest(turn({ textFormat: { type: 'json_object' } }), options).response_format).toEqual({ type: 'json_object' });
    expect(convertToChatRequest(turn({ maxOutputTokens: 50 }), { maxTokensField: 'max_tokens' })).toMatchObject({ max_tokens: 50 });
  });

  it('refuses what Chat Completions cannot carry, naming the parameter', () => {
    const cases: [unknown[], string][] = [
      [[{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/y.pdf' }] }], 'input[0].content[0].file_url'],
      [[{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }], 'input[0].content[0].image_url'],
      [[{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', detail: 'auto' }] }], 'input[0].output[0].image_url'],
      [[{ type: 'compaction', encrypted_content: 'x' }], 'input[0].type'],
    ];
    for (const [input, param] of cases) {
      expect(() => convertToChatRequest(turn({ items: items(input) }), options)).toThrow(expect.objectContaining({ status: 400, param }) as GatewayError);
    }
  });

  it('images and files a tool answered with follow that turn\'s tool messages as one user message, since a tool message takes text only', () => {
    const body = convertToChatRequest(
      turn({
        items: items([
          { role: 'user', content: 'look at both pages' },
          { type: 'function_call', call_id: 'c1', name: 'screenshot', arguments: '{"page":1}' },
          { type: 'function_call', call_id: 'c2', name: 'screenshot', arguments: '{"page":2}' },
          { type: 'function_call', call_id: 'c3', name: 'title', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'page 1' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_image', image_url: 'https://x/2.png' }, { type: 'input_file', file_data: 'data:application/pdf;base64,BBBB', filename: 'p.pdf' }] },
          { type: 'function_call_output', call_id: 'c3', output: 'Two pages' },
          { role: 'user', content: 'which is better?' },
        ]),
      }),
      options,
    );
    expect(body.messages).toEqual([
      { role: 'user', content: 'look at both pages' },
      { role: 'assistant', content: null, tool_calls: ['c1', 'c2', 'c3'].map((id, index) => expect.objectContaining({ id, function: { name: index < 2 ? 'screenshot' : 'title', arguments: expect.any(String) } })) },
      { role: 'tool', tool_call_id: 'c1', content: 'page 1\n\n[1 image of this output is in the next user message]' },
      { role: 'tool', tool_call_id: 'c2', content: '[2 attachments of this output are in the next user message]' },
      { role: 'tool', tool_call_id: 'c3', content: 'Two pages' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '1 image returned by tool call c1:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'text', text: '2 attachments returned by tool call c2:' },
          { type: 'image_url', image_url: { url: 'https://x/2.png' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,BBBB', filename: 'p.pdf' } },
        ],
      },
      { role: 'user', content: 'which is better?' },
    ]);
    // At the end of the input (the turn the model answers now), too.
    const last = convertToChatRequest(turn({ items: items([{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x/1.png' }] }]) }), options);
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: '1 image returned by tool call c:' }, { type: 'image_url', image_url: { url: 'https://x/1.png' } }] });
  });
});

describe("a conversation as Mistral takes it back: call ids of nine letters and digits, an assistant turn between tool results and a user message", () => {
  const history = items([
    { role: 'user', content: 'Add.' },
    { type: 'function_call', call_id: 'call_Abc123XyZ987def456ghi', name: 'add', arguments: '{}' },
    { type: 'function_call', call_id: 'K3x9Pq2Zm', name: 'add', arguments: '{"a":1}' },
    { type: 'function_call_output', call_id: 'call_Abc123XyZ987def456ghi', output: '1' },
    { type: 'function_call_output', call_id: 'K3x9Pq2Zm', output: '2' },
  ]);
  const sentIds = (model: string, dialect?: 'auto' | 'openai' | 'mistral') => {
    const messages = convertToChatRequest(turn({ model, items: history }), { ...options, ...(dialect && { dialect }) }).messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
    return { calls: messages.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []), outputs: messages.flatMap((message) => (message.tool_call_id ? [message.tool_call_id] : [])) };
  };

  it.each(['mistral-large-latest', 'open-mixtral-8x22b', 'codestral-latest', 'mistralai/Mistral-Small-3.2-24B-Instruct-2506'])('%s: an id that does not fit goes as nine of its hash, the same for its output; one that fits as it is', (model) => {
    const { calls, outputs } = sentIds(model);
    expect(calls[0]).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(calls[1]).toBe('K3x9Pq2Zm');
    expect(outputs).toEqual(calls);
    // The same in every request: a prompt cache still matches.
    expect(sentIds(model).calls).toEqual(calls);
  });

  it('a user, system or developer message right after tool results gets an assistant turn with content before it, for Mistral only; instructions take the roles Mistral has', () => {
    const answeredAndMore = items([
      { role: 'user', content: 'Add.' },
      { type: 'function_call', call_id: 'K3x9Pq2Zm', name: 'add', arguments: '{}' },
      { type: 'function_call_output', call_id: 'K3x9Pq2Zm', output: '2' },
      { role: 'user', content: 'And now double it.' },
      { type: 'function_call', call_id: 'P2x9Pq2Zm', name: 'add', arguments: '{}' },
      { type: 'function_call_output', call_id: 'P2x9Pq2Zm', output: '4' },
      { role: 'developer', content: 'Be brief.' },
    ]);
    const sent = (model: string) => convertToChatRequest(turn({ model, items: answeredAndMore }), options).messages;
    // Mistral has no developer role and takes system messages only before the conversation: a later one is the user's.
    expect(sent('mistral-large-latest').map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent('mistral-large-latest').at(-1)).toEqual({ role: 'user', content: 'Be brief.' });
    const leading = convertToChatRequest(turn({ model: 'mistral-large-latest', instructions: 'Be kind.', items: items([{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'Hi.' }]) }), options).messages;
    expect(leading.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    // Mistral refuses an assistant message with neither content nor calls.
    expect(sent('mistral-large-latest')[3]).toEqual({ role: 'assistant', content: 'Done.' });
    expect(sent('gpt-4.1').map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant', 'tool', 'developer']);
  });

  it("another server's reasoning on an assistant turn stays behind (Mistral refuses fields it does not know)", () => {
    const reasoned = items([
      { role: 'user', content: 'Add.' },
      { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'I should add.' }] },
      { type: 'function_call', call_id: 'K3x9Pq2Zm', name: 'add', arguments: '{}' },
      { type: 'function_call_output', call_id: 'K3x9Pq2Zm', output: '2' },
    ]);
    const assistant = (model: string) => convertToChatRequest(turn({ model, items: reasoned }), options, reasoningBack).messages.find((message) => message.role === 'assistant');
    expect(assistant('deepseek-reasoner')).toHaveProperty('reasoning_content', 'I should add.');
    expect(assistant('mistral-large-latest')).not.toHaveProperty('reasoning_content');
  });

  it('other models get ids as given, unless the provider says otherwise', () => {
    expect(sentIds('gpt-4.1').calls).toEqual(['call_Abc123XyZ987def456ghi', 'K3x9Pq2Zm']);
    expect(sentIds('my-finetune', 'mistral').calls[0]).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(sentIds('mistral-large-latest', 'openai').calls[0]).toBe('call_Abc123XyZ987def456ghi');
  });
});

describe("Gemini's call signatures go back only to Gemini's models", () => {
  const history = items([
    { role: 'user', content: 'Add.' },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeSignature({ part: 'call', callId: 'gcall-1', signature: 'sig-1', name: 'add', arguments: '{}' }) },
    { type: 'function_call', call_id: 'gcall-1', name: 'add', arguments: '{}' },
    { type: 'function_call_output', call_id: 'gcall-1', output: '1' },
  ]);
  const sentCall = (model: string) => (convertToChatRequest(turn({ model, items: history }), options).messages.find((message) => message.role === "assistant") as unknown as { tool_calls: Record<string, unknown>[] }).tool_calls[0];

  it('on the call to a Gemini model, as extra_content; to any other, nothing beyond the call (Mistral refuses fields it does not know)', () => {
    expect(sentCall('gemini-3-pro-preview')).toMatchObject({ id: 'gcall-1', extra_content: { google: { thought_signature: 'sig-1' } } });
    expect(sentCall('models/gemini-3-flash')).toHaveProperty('extra_content');
    expect(sentCall('gpt-4.1')).not.toHaveProperty('extra_content');
    expect(sentCall('mistral-large-latest')).not.toHaveProperty('extra_content');
  });

  it("a step's first call that never had a signature takes Google's stand-in on Gemini 3, and only there", () => {
    const unsigned = items([{ role: 'user', content: 'Add.' }, { type: 'function_call', call_id: 'toolu_1', name: 'add', arguments: '{}' }, { type: 'function_call_output', call_id: 'toolu_1', output: '1' }]);
    const first = (model: string) => (convertToChatRequest(turn({ model, items: unsigned }), options).messages[1] as unknown as { tool_calls: Record<string, unknown>[] }).tool_calls[0];
    expect(first('gemini-3-pro-preview')).toMatchObject({ extra_content: { google: { thought_signature: 'skip_thought_signature_validator' } } });
    expect(first('gemini-2.5-flash')).not.toHaveProperty('extra_content');
    expect(first('gpt-4.1')).not.toHaveProperty('extra_content');
  });
});

describe('the field earlier reasoning goes back in', () => {
  const refusal = (message: string) => new GatewayError({ status: 400, type: 'invalid_request_error', code: null, message });

  it('none until the model has answered with reasoning; then the field it answered in; each model its own', () => {
    const choice = new ReasoningFieldChoice('auto');
    expect(choice.field('gpt-oss-120b')).toBeNull();
    choice.heardFrom('gpt-oss-120b', 'reasoning');
    expect(choice.field('gpt-oss-120b')).toBe('reasoning');
    expect(choice.field('deepseek-reasoner')).toBeNull();
    expect(choice.takesDetails('gpt-oss-120b')).toBe(false);
    choice.heardFrom('anthropic/claude-sonnet-4.5', 'details');
    expect(choice.takesDetails('anthropic/claude-sonnet-4.5')).toBe(true);
    expect(convertToChatRequest(turn({ items: items([{ role: 'user', content: 'Add.' }, { type: 'reasoning', id: 'rs', summary: [], content: [{ type: 'reasoning_text', text: 'Plan.' }] }, { type: 'function_call', call_id: 'c', name: 'add', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: '1' }]) }), { maxTokensField: 'max_completion_tokens' }).messages[1]).not.toHaveProperty('reasoning_content');
  });

  it("a server that asks for the field (DeepSeek's \"Missing `reasoning_content`\") gets it; one that refuses the field sent gets the other; anything else is no answer about the field", () => {
    const choice = new ReasoningFieldChoice('auto');
    expect(choice.afterRefusal(refusal('Missing `reasoning_content` field in the assistant message at message index 1.'), 'deepseek-reasoner', null)).toBe('reasoning_content');
    expect(choice.field('deepseek-reasoner')).toBe('reasoning_content');
    // Asked for the field it was sent: nothing to change.
    expect(choice.afterRefusal(refusal('The `reasoning_content` in the thinking mode must be passed back to the API.'), 'deepseek-reasoner', 'reasoning_content')).toBeUndefined();
    choice.heardFrom('gpt-oss-120b', 'reasoning_content');
    expect(choice.afterRefusal(refusal("'messages.1' : property 'reasoning_content' is unsupported"), 'gpt-oss-120b', 'reasoning_content')).toBe('reasoning');
    expect(choice.afterRefusal(refusal("Unsupported parameter: 'reasoning_effort' is not supported with this model."), 'gpt-oss-120b', 'reasoning')).toBeUndefined();
    expect(new ReasoningFieldChoice('reasoning').afterRefusal(refusal("property 'reasoning' is unsupported"), 'm', 'reasoning')).toBeUndefined();
  });
});
