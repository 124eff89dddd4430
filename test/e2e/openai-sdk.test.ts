import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, fixture, ScriptedChatUpstream, sse, textReply, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** The official OpenAI SDK against the real gateway and a scripted upstream. */
describe('OpenAI SDK → loopgate → Chat Completions upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.setScript(textReply('Hello from upstream'));
  });

  it('responses.create returns a schema-valid completed response', async () => {
    const response = await client.responses.create({ model: 'gpt-test', input: 'Say hello', instructions: 'Be kind.', metadata: { run: '1' }, temperature: 0.5 });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Hello from upstream');
    expect(response.model).toBe('gpt-test');
    expect(response.instructions).toBe('Be kind.');
    expect(response.metadata).toEqual({ run: '1' });
    expect(response.temperature).toBe(0.5);
    expect(response.usage).toMatchObject({ input_tokens: 5, output_tokens: 2, total_tokens: 7 });
    expect(response._request_id).toMatch(/^req_/);

    const sent = upstream.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-test');
    expect(sent.body).toEqual({ model: 'gpt-test', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Say hello' }], stream: false, temperature: 0.5 });
  });

  it('responses.create({stream: true}) yields schema-valid events in SDK order', async () => {
    const stream = await client.responses.create({ model: 'gpt-test', input: 'Say hello', stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(final.output[0].content[0].text).toBe('Hello from upstream');
    expect(upstream.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('responses.stream() emits text deltas and finalResponse() matches the terminal event', async () => {
    const stream = client.responses.stream({ model: 'gpt-test', input: 'Say hello' });
    const events: any[] = [];
    let text = '';
    stream.on('response.output_text.delta', (event) => (text += event.delta));
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assertValidResponse(final);
    assertEventStreamInvariants(events);
    expect(text).toBe('Hello from upstream');
    expect(final.output_text).toBe('Hello from upstream');
    expect(final.id).toBe(events[0].response.id);
  });

  it('function calls stream through the SDK helper with arguments intact', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: fixture('openai-parallel-tool-calls.sse').split(/(?<=\n\n)/) }));
    const tools = [
      { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
      { type: 'function' as const, name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } }, strict: false },
    ];
    const stream = client.responses.stream({ model: 'gpt-test', input: 'Weather and time in Paris?', tools, tool_choice: 'auto', parallel_tool_calls: true });
    const argumentDeltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assertEventStreamInvariants(events);
    assertValidResponse(final);
    const calls = final.output.filter((item) => item.type === 'function_call');
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { zone: 'Europe/Paris' }],
    ]);
    expect(argumentDeltas.join('')).toBe('{"city": "Paris"}{"zone": "Europe/Paris"}');
    expect(final.tools).toEqual(tools.map((tool) => ({ ...tool, description: null })));
    expect(upstream.requests[0]!.body).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: true });
  });

  it('a conversation with function_call_output input goes upstream as tool messages', async () => {
    const response = await client.responses.create({
      model: 'gpt-test',
      input: [
        { role: 'user', content: 'Weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp":3}' },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
    });
    assertValidResponse(response);
    expect(upstream.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
    ]);
  });

  it('responses.parse() with a json_schema format gets output_parsed', async () => {
    upstream.setScript(textReply('{"name":"Ada","age":36}'));
    const response = await client.responses.parse({
      model: 'gpt-test',
      input: 'Who?',
      text: { format: { type: 'json_schema', name: 'person', strict: true, schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'number' } }, required: ['name', 'age'], additionalProperties: false } } },
    });
    expect(response.output_parsed).toEqual({ name: 'Ada', age: 36 });
    expect(response.text!.format).toEqual({ type: 'json_schema', name: 'person', description: null, schema: null, strict: true });
    expect(upstream.requests[0]!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'person', strict: true } });
  });

  it('every echoed request setting validates and round-trips', async () => {
    const response = await client.responses.create({
      model: 'gpt-test',
      input: 'x',
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] },
      tools: [{ type: 'function', name: 'f', description: 'F', parameters: { type: 'object' }, strict: true }],
      top_p: 0.5,
      // The schema has penalties; this SDK version's types do not.
      ...({ presence_penalty: 0.25, frequency_penalty: 0.5 } as object),
      max_output_tokens: 64,
      max_tool_calls: 3,
      reasoning: { effort: 'low', summary: 'auto' },
      truncation: 'auto',
      service_tier: 'flex',
      safety_identifier: 'sid',
      prompt_cache_key: 'pck',
      top_logprobs: 2,
      store: false,
      parallel_tool_calls: false,
      text: { format: { type: 'json_object' }, verbosity: 'high' },
      include: ['reasoning.encrypted_content'],
    });
    assertValidResponse(response);
    expect(response).toMatchObject({
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] },
      top_p: 0.5,
      presence_penalty: 0.25,
      frequency_penalty: 0.5,
      max_output_tokens: 64,
      max_tool_calls: 3,
      reasoning: { effort: 'low', summary: 'auto' },
      truncation: 'auto',
      service_tier: 'flex',
      safety_identifier: 'sid',
      prompt_cache_key: 'pck',
      top_logprobs: 2,
      store: false,
      parallel_tool_calls: false,
      text: { format: { type: 'json_object' }, verbosity: 'high' },
    });
  });

  it('reasoning and refusals arrive as schema-valid items through the SDK stream helper', async () => {
    for (const name of ['vllm-reasoning-content.sse', 'openai-refusal.sse']) {
      upstream.setScript(() => ({ kind: 'sse', pieces: [fixture(name)] }));
      const stream = client.responses.stream({ model: 'gpt-test', input: 'x' });
      const events: any[] = [];
      for await (const event of stream) events.push(event);
      assertEventStreamInvariants(events);
      assertValidResponse(await stream.finalResponse());
    }
  });

  it('reasoning.summary asked for: the model\'s reasoning is the item\'s summary too, streamed as summary text events (what the AI SDK, LangChain and Codex show)', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: [fixture('vllm-reasoning-content.sse')] }));
    const stream = client.responses.stream({ model: 'gpt-test', input: 'x', reasoning: { summary: 'auto' } });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    const reasoning = final.output.find((item: any) => item.type === 'reasoning');
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'The user asks 2+2. That is 4.' }]);
    expect(reasoning.content).toEqual([{ type: 'reasoning_text', text: 'The user asks 2+2. That is 4.' }]);
    expect(events.filter((event) => event.type === 'response.reasoning_summary_text.delta').map((event) => event.delta).join('')).toBe('The user asks 2+2. That is 4.');
    expect(events.map((event) => event.type).filter((type) => type.startsWith('response.reasoning_summary'))).toEqual([
      'response.reasoning_summary_part.added',
      ...Array(3).fill('response.reasoning_summary_text.delta'),
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ]);
    assertValidResponse(await stream.finalResponse());
    // Not asked for: the summary stays empty, as OpenAI leaves it.
    const plain = await client.responses.stream({ model: 'gpt-test', input: 'x' }).finalResponse();
    expect(plain.output.find((item) => item.type === 'reasoning')).toMatchObject({ summary: [] });
  });

  it('include: message.output_text.logprobs asks the upstream for logprobs and returns them', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: [fixture('openai-logprobs.sse')] }));
    const stream = client.responses.stream({ model: 'gpt-test', input: 'Yes or no?', include: ['message.output_text.logprobs'], top_logprobs: 2 });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(final.output[0].content[0].logprobs.map((entry: any) => entry.token)).toEqual(['Yes', '.']);
    expect(upstream.requests[0]!.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
  });

  it('a length-limited stream ends with response.incomplete that the SDK accepts', async () => {
    upstream.setScript((): UpstreamReply => ({ kind: 'sse', pieces: sse([chunk({ content: 'Once' }), chunk({}, 'length'), usageChunk(3, 1)]) }));
    const stream = client.responses.stream({ model: 'gpt-test', input: 'story', max_output_tokens: 16 });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(events.at(-1).type).toBe('response.incomplete');
    expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(upstream.requests[0]!.body.max_completion_tokens).toBe(16);
  });
});
