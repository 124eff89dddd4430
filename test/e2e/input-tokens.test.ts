import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import OpenAIv6 from 'openai-v6';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { summaryMessageText } from '../../src/engine/compaction/compaction-prompt.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidExtension } from '../support/openresponses-schema.ts';
import { anthropic, flavors, openaiChat, openaiResponses } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * `client.responses.inputTokens.count` (POST /v1/responses/input_tokens)
 * through openai v7: Anthropic counts with its own endpoint, sent what
 * Messages would be sent; Chat Completions upstreams have none, so the
 * gateway estimates (engine/token-estimate.ts).
 */
const isCount = (request: RecordedRequest) => anthropic.tokenCount!.isCount(request);
const tools = [
  { type: 'function' as const, name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false },
];

describe.each(flavors)('input token counts over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const countsTokens = (request: RecordedRequest) => flavor.tokenCount?.isCount(request) ?? false;
  const upstreamCount = (): UpstreamReply => flavor.tokenCount?.reply(1234) ?? { kind: 'destroy' };
  let count: (request: RecordedRequest) => UpstreamReply = upstreamCount;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => (countsTokens(request) ? count(request) : flavor.render(request, { text: 'Sunny all week.' })));
    gateway = await startGateway(url, flavor.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    count = upstreamCount;
  });

  it('refuses parameters a count does not take, and a request without a model, as 400s naming them', async () => {
    await expect(client.responses.inputTokens.count({ model: flavor.model, input: 'x', stream: true } as never)).rejects.toMatchObject({ status: 400, code: 'unknown_parameter', param: 'stream' });
    await expect(client.responses.inputTokens.count({ input: 'x' })).rejects.toMatchObject({ status: 400, code: 'missing_required_parameter', param: 'model' });
    await expect(client.responses.inputTokens.count()).rejects.toMatchObject({ status: 400, param: 'model' });
    await expect(client.responses.inputTokens.count({ model: flavor.model, input: [{ role: 'user', content: 5 }] } as never)).rejects.toMatchObject({ status: 400, param: 'input[0].content' });
    await expect(client.responses.inputTokens.count({ model: flavor.model, previous_response_id: 'resp_missing', input: 'x' })).rejects.toMatchObject({ status: 404, code: 'previous_response_not_found' });
    // `personality` is OpenAI's; accepted and ignored.
    const counted = await client.responses.inputTokens.count({ model: flavor.model, input: 'x', personality: 'friendly' });
    expect(counted.object).toBe('response.input_tokens');
    // The upstream's own count where its API has one, else the gateway's estimate.
    if (flavor.tokenCount) expect(counted.input_tokens).toBe(1234);
    expect(upstream.requests.filter((request) => !countsTokens(request))).toEqual([]);
  });
});

describe('over anthropic: count_tokens is sent the Messages body', () => {
  const upstream = new ScriptedChatUpstream();
  let countReply: UpstreamReply = { kind: 'json', body: { input_tokens: 4321 } };
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => (isCount(request) ? countReply : anthropic.render(request, { text: 'Sunny all week.' })));
    gateway = await startGateway(url, anthropic.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    countReply = { kind: 'json', body: { input_tokens: 4321 } };
  });

  it('passes the upstream count through, counted by the provider, for the body Messages gets (history, instructions, tools, thinking)', async () => {
    const first = await client.responses.create({ model: anthropic.model, input: 'Weather in Oslo?' });
    const params = {
      model: anthropic.model,
      previous_response_id: first.id,
      instructions: 'Answer briefly.',
      input: 'And tomorrow?',
      tools,
      // Not a forced tool, which Claude cannot combine with thinking.
      tool_choice: 'auto' as const,
      parallel_tool_calls: false,
      reasoning: { effort: 'low' as const },
    };
    upstream.requests.length = 0;
    await client.responses.create(params);
    const messages = upstream.requests.at(-1)!;
    expect(messages.path).toBe('/v1/messages');

    const counted = await client.responses.inputTokens.count(params);
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: 4321, 'loopgate:counted_by': 'provider' });
    assertValidExtension('InputTokenCount', counted);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages/count_tokens');
    const { max_tokens: _maxTokens, stream: _stream, ...expected } = messages.body;
    expect(sent.body).toEqual(expected);
    // What makes it the same conversation: the stored turn, the instructions, the tools and thinking.
    expect(sent.body).toMatchObject({ system: [{ type: 'text', text: 'Answer briefly.' }], tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'enabled' } });
    expect(sent.body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['get_weather']);
    expect(sent.headers['x-api-key'] ?? sent.headers.authorization).toBeTruthy();
  });

  it('maps count_tokens failures as other upstream failures', async () => {
    countReply = { kind: 'json', status: 500, body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } };
    const failed = await fetch(`${gateway.baseURL}/responses/input_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: anthropic.model, input: 'x' }) });
    expect(failed.status).toBe(502);
    const body = await failed.json();
    assertErrorEnvelope(body);
    expect(body.error.code).toBe('upstream_error');

    countReply = { kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: Input should be a valid list' } } };
    await expect(client.responses.inputTokens.count({ model: anthropic.model, input: 'x' })).rejects.toMatchObject({ status: 400, param: 'messages.0.content' });
  });
});

describe('over openai-chat: the gateway estimates', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let client: OpenAI;
  const count = async (params: OpenAI.Responses.InputTokenCountParams) => {
    const counted = await client.responses.inputTokens.count({ model: openaiChat.model, ...params });
    assertValidExtension('InputTokenCount', counted);
    expect((counted as unknown as Record<string, unknown>)['loopgate:counted_by']).toBe('estimate');
    return counted.input_tokens;
  };

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => openaiChat.render(request, { text: 'Sunny all week, with a light breeze from the west.' }));
    gateway = await startGateway(url, { ...openaiChat.config(url), models: { small: { provider: 'openai', model: openaiChat.model, contextWindow: 200 } } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('counts o200k_base tokens of the Chat request: 3 per message plus its text, 3 for the reply', async () => {
    const text = 'What is the weather like in Oslo this week?';
    expect(await count({ input: text })).toBe(3 + 3 + countTokens(text));
    expect(await count({ input: text, instructions: 'Answer briefly.' })).toBe(3 + 3 + countTokens(text) + 3 + countTokens('Answer briefly.'));
    // Special-token text is text.
    expect(await count({ input: '<|endoftext|>' })).toBe(3 + 3 + countTokens('<|endoftext|>', { disallowedSpecial: new Set() }));
    // openai v6 calls the same endpoint.
    const v6 = new OpenAIv6({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    expect(await v6.responses.inputTokens.count({ model: openaiChat.model, input: text })).toMatchObject({ object: 'response.input_tokens', input_tokens: 3 + 3 + countTokens(text) });
    expect(upstream.requests).toEqual([]);
  });

  it("counts texts the tokenizer is slowest on within bounds: a MiB of one letter, and a long input of random letters (the first held the event loop for minutes)", { timeout: 30_000 }, async () => {
    // A run of one letter: eight to a token.
    expect(await count({ input: 'x'.repeat(1_048_576) })).toBe(3 + 3 + 1_048_576 / 8);
    // Past the characters counted token by token, the rest at the rate found, within a few percent of the exact count.
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const words = Array.from({ length: 150_000 }, (_, index) => letters.slice(index % 20, (index % 20) + 1 + (index % 6))).join(' ');
    const estimated = await count({ input: [{ role: 'user', content: words.slice(0, 300_000) }, { role: 'user', content: words.slice(300_000) }] });
    const exact = 3 + 3 + 3 + countTokens(words.slice(0, 300_000)) + 3 + countTokens(words.slice(300_000));
    expect(Math.abs(estimated - exact) / exact).toBeLessThan(0.05);
    // Meanwhile, and after, the gateway answers.
    expect((await fetch(`${gateway.origin}/healthz`)).status).toBe(200);
  });

  it('counts a compaction item as the summary the model is sent, not its ciphertext', async () => {
    const compacted = await client.responses.compact({ model: openaiChat.model, input: [{ role: 'user', content: 'remember 42' }] as never });
    const [kept, compaction] = compacted.output as any[];
    const summary = 'Sunny all week, with a light breeze from the west.';
    const expanded = await count({ input: [{ role: 'user', content: kept.content[0].text }, { role: 'user', content: summaryMessageText(summary) }] });
    expect(await count({ input: compacted.output as never })).toBe(expanded);
    expect(countTokens(compaction.encrypted_content)).toBeGreaterThan(countTokens(summaryMessageText(summary)));
    upstream.requests.length = 0;
  });

  it('grows with the input, counts tools, and includes the previous_response_id history', async () => {
    const short = await count({ input: 'Weather?' });
    const long = await count({ input: 'Weather? '.repeat(200) });
    expect(long).toBeGreaterThan(short + 200);

    const withTools = await count({ input: 'Weather?', tools });
    const definitions = JSON.stringify(tools.map(({ type, ...tool }) => ({ type, function: tool })));
    expect(withTools - short).toBe(countTokens(definitions));

    const first = await client.responses.create({ model: openaiChat.model, input: 'Weather in Oslo?' });
    const continued = await count({ previous_response_id: first.id, input: 'And tomorrow?' });
    const resent = await count({
      input: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'And tomorrow?' },
      ],
    });
    expect(continued).toBe(resent);
    expect(continued).toBeGreaterThan((await count({ input: 'And tomorrow?' })) + countTokens(first.output_text));

    const calls = await count({
      input: [
        { role: 'user', content: 'Weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny, 21 degrees' },
      ],
      tools,
    });
    expect(calls - withTools).toBe(3 + countTokens('get_weather') + countTokens('{"city":"Oslo"}') + 3 + countTokens('sunny, 21 degrees'));
    // One model call for the stored response above; counting never reached the upstream.
    expect(upstream.requests).toHaveLength(1);
  });

  it('with truncation auto, counts what truncation would leave of the conversation', async () => {
    const input = Array.from({ length: 12 }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `Message ${index}: ${'northern lights '.repeat(10)}` }));
    const whole = await client.responses.inputTokens.count({ model: 'small', input });
    const truncated = await client.responses.inputTokens.count({ model: 'small', input, truncation: 'auto' });
    expect(whole.input_tokens).toBeGreaterThan(200);
    expect(truncated.input_tokens).toBeLessThanOrEqual(200);
    expect(truncated.input_tokens).toBeGreaterThan(100);
  });
});

describe.each([
  { flavor: openaiResponses, status: 405, body: { detail: 'Method Not Allowed' } },
  { flavor: openaiResponses, status: 404, body: { detail: 'Not Found' } },
  { flavor: anthropic, status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } } },
  { flavor: anthropic, status: 405, body: { detail: 'Method Not Allowed' } },
])('over a $flavor.name server without its counting endpoint ($status: vLLM answers 405)', ({ flavor, status, body }) => {
  const upstream = new ScriptedChatUpstream();
  const lines: { level: number; msg: string }[] = [];
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => (flavor.tokenCount!.isCount(request) ? { kind: 'json', status, body } : flavor.render(request, { text: 'ok' })));
    gateway = await startGateway(url, { ...flavor.config(url), logLevel: 'info' }, {}, [], { write: (line) => lines.push(JSON.parse(line)) });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('estimates the count, as for a wire without one, and says nothing of a wrong base URL', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const counted = await client.responses.inputTokens.count({ model: flavor.model, input: 'How is the weather?' });
      assertValidExtension('InputTokenCount', counted);
      expect(counted).toMatchObject({ object: 'response.input_tokens', 'loopgate:counted_by': 'estimate' });
      expect(counted.input_tokens).toBeGreaterThan(0);
    }
    expect(upstream.requests.filter((request) => flavor.tokenCount!.isCount(request))).toHaveLength(3);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
