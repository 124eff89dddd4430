import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { MockExecutor, sleep } from '../support/scripted-provider.ts';

/** A model that calls `get_weather` (server-side) until it has a result, then answers with it. */
function weatherModel(request: RecordedRequest): UpstreamReply {
  const messages = request.body.messages as any[];
  const toolResults = messages.filter((message) => message.role === 'tool');
  const wantsClientTool = messages.some((message) => message.role === 'user' && String(message.content).includes('confirm'));
  const stream = request.body.stream === true;
  const callTurn = (calls: { id: string; name: string; args: string }[]): UpstreamReply =>
    stream
      ? { kind: 'sse', pieces: sse([...calls.map((call, index) => chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] })), chunk({}, 'tool_calls'), usageChunk(30, 10)]) }
      : {
          kind: 'json',
          body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } })) }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 30, completion_tokens: 10 } },
        };
  if (toolResults.length === 0) {
    const calls = [
      { id: 'call_oslo', name: 'get_weather', args: '{"city":"Oslo"}' },
      { id: 'call_rome', name: 'get_weather', args: '{"city":"Rome"}' },
    ];
    if (wantsClientTool) calls.push({ id: 'call_confirm', name: 'confirm_with_user', args: '{}' });
    return callTurn(calls);
  }
  const answer = `Weather: ${toolResults.map((message) => message.content).join(' | ')}`;
  return stream
    ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), chunk({ content: answer }), chunk({}, 'stop'), usageChunk(60, 12)]) }
    : { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }], usage: { prompt_tokens: 60, completion_tokens: 12 } } };
}

const tools = [
  { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
  { type: 'function' as const, name: 'confirm_with_user', parameters: { type: 'object' }, strict: false },
];

describe('agentic loop through the OpenAI SDK, with a server-side executor wired in at build time', () => {
  const upstream = new ScriptedChatUpstream(weatherModel);
  const executor = new MockExecutor(['get_weather'], async (call, signal) => {
    await sleep(50, signal);
    return { output: `${JSON.parse(call.arguments).city}: 12°C`, isError: false };
  });
  let gateway: RunningGateway;
  let client: OpenAI;
  let upstreamUrl: string;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, {}, {}, [executor]);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.setScript(weatherModel);
    executor.calls.length = 0;
  });

  it('responses.create runs the tools on the server and answers in one response', async () => {
    const response = await client.responses.create({ model: 'm', input: 'Weather in Oslo and Rome?', tools });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
    expect(response.output_text).toBe('Weather: Oslo: 12°C | Rome: 12°C');
    expect(executor.calls.map((call) => call.callId)).toEqual(['call_oslo', 'call_rome']);
    expect(response.usage).toMatchObject({ input_tokens: 90, output_tokens: 22, total_tokens: 112 });
    expect(upstream.requests).toHaveLength(2);
  });

  it('responses.stream() accepts the multi-turn stream and finalResponse() holds every item', async () => {
    const stream = client.responses.stream({ model: 'm', input: 'Weather in Oslo and Rome?', tools });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(final.output_text).toBe('Weather: Oslo: 12°C | Rome: 12°C');
    expect(final.output.map((item) => item.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
  });

  it('a client tool in the turn pauses with requires_action; the continuation runs the server calls and finishes', async () => {
    const stream = client.responses.stream({ model: 'm', input: 'Weather in Oslo and Rome? Please confirm with me.', tools });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    assertEventStreamInvariants(events);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'requires_action' } });
    expect(executor.calls).toHaveLength(0);
    const paused = events.at(-1).response;

    const continued = await client.responses.create({
      model: 'm',
      tools,
      previous_response_id: paused.id,
      input: [{ type: 'function_call_output', call_id: 'call_confirm', output: 'confirmed' }],
    });
    assertValidResponse(continued);
    expect(continued.status).toBe('completed');
    expect(executor.calls.map((call) => call.callId).sort()).toEqual(['call_oslo', 'call_rome']);
    expect(continued.output_text).toBe('Weather: confirmed | Oslo: 12°C | Rome: 12°C');
  });

  it('a client that disconnects mid-tool cancels the executor and nothing keeps running', async () => {
    const blocking = new MockExecutor(['get_weather'], async (_call, signal) => {
      await sleep(10_000, signal);
      return { output: 'late', isError: false };
    });
    const isolated = await startGateway(upstreamUrl, {}, {}, [blocking]);
    try {
      const controller = new AbortController();
      const response = await fetch(`${isolated.baseURL}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input: 'Weather in Oslo and Rome?', tools, stream: true }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      let seen = '';
      while (!seen.includes('"function_call_output"')) seen += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      const abortedAt = performance.now();
      while (blocking.aborts.length < 2 && performance.now() - abortedAt < 1_000) await sleep(10);
      expect(blocking.aborts.sort()).toEqual(['call_oslo', 'call_rome']);
      expect(performance.now() - abortedAt).toBeLessThan(500);
      // The loop stopped: no second model call follows the cancelled tools.
      await sleep(200);
      expect(upstream.requests).toHaveLength(1);
    } finally {
      await isolated.close();
    }
  });
});
