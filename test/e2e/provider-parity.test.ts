import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, type ModelTurn, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../support/scripted-chat-upstream.ts';
import { MockExecutor, sleep } from '../support/scripted-provider.ts';

/**
 * The capabilities of every issue — the pipeline, state, the agentic loop and
 * MCP — over each upstream API, through the official SDK. The model is
 * scripted once, in terms of what it has seen, and rendered in each
 * provider's wire format.
 */
describe.each(flavors)('over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const executor = new MockExecutor(['lookup'], async (call, signal) => {
    await sleep(100, signal);
    return { output: `found ${JSON.parse(call.arguments).q}`, isError: false };
  });
  let gateway: RunningGateway;
  let client: OpenAI;
  let model: (seen: Seen[], request: RecordedRequest) => ModelTurn = () => ({ text: 'Hello there' });
  const lastSeen = () => flavor.seen(upstream.requests.at(-1)!);

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    upstream.setScript((request) => flavor.render(request, model(flavor.seen(request), request)));
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowed_tools: ['add'] }] } }, {}, [executor]);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    model = () => ({ text: 'Hello there' });
  });

  it('pipeline: create, create({stream}) and responses.stream() give schema-valid results', async () => {
    const created = await client.responses.create({ model: flavor.model, input: 'Hi', instructions: 'Be nice.' });
    assertValidResponse(created);
    expect(created.output_text).toBe('Hello there');
    expect(lastSeen()).toEqual([{ kind: 'system', text: 'Be nice.' }, { kind: 'user', text: 'Hi' }]);

    const raw = await client.responses.create({ model: flavor.model, input: 'Hi', stream: true });
    const events: any[] = [];
    for await (const event of raw) events.push(event);
    expect(assertEventStreamInvariants(events).output[0].content[0].text).toBe('Hello there');

    const helper = client.responses.stream({ model: flavor.model, input: 'Hi' });
    const helperEvents: any[] = [];
    for await (const event of helper) helperEvents.push(event);
    assertEventStreamInvariants(helperEvents);
    expect((await helper.finalResponse()).output_text).toBe('Hello there');
  });

  it('pipeline: an upstream that fails before any content gets a real HTTP status, streaming or not', async () => {
    const { reply, status } = flavor.failAtOnce();
    upstream.setScript(() => reply);
    try {
      for (const stream of [false, true]) {
        const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'x', stream }) });
        expect(response.status).toBe(status);
        expect(((await response.json()) as any).error.message).toBeTruthy();
      }
    } finally {
      upstream.setScript((request) => flavor.render(request, model(flavor.seen(request), request)));
    }
  });

  it('state: function calls come back to the client, and previous_response_id continues with the whole conversation', async () => {
    model = (seen) => (seen.some((entry) => entry.kind === 'result') ? { text: 'It is sunny.' } : { calls: [{ id: 'call_w1', name: 'get_weather', args: { city: 'Oslo' } }] });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: flavor.model, input: 'Weather?', tools });
    expect(first.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' })]);
    const second = await client.responses.create({ model: flavor.model, previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_w1', output: 'sunny' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('It is sunny.');
    expect(lastSeen()).toEqual([
      { kind: 'user', text: 'Weather?' },
      { kind: 'call', id: 'call_w1', name: 'get_weather', args: { city: 'Oslo' } },
      { kind: 'result', id: 'call_w1', content: 'sunny' },
    ]);
    const third = await client.responses.create({ model: flavor.model, previous_response_id: second.id, input: 'Thanks!' });
    expect(third.previous_response_id).toBe(second.id);
    expect(lastSeen().map((entry) => entry.kind)).toEqual(['user', 'call', 'result', 'assistant', 'user']);
  });

  it('loop: server-side calls run concurrently and the model answers in one streamed response', async () => {
    model = (seen) => {
      const results = seen.filter((entry): entry is Extract<Seen, { kind: 'result' }> => entry.kind === 'result');
      if (results.length > 0) return { text: results.map((entry) => entry.content).join(', ') };
      return { calls: [{ id: 'call_a', name: 'lookup', args: { q: 'a' } }, { id: 'call_b', name: 'lookup', args: { q: 'b' } }] };
    };
    const started = performance.now();
    const stream = client.responses.stream({ model: flavor.model, input: 'Look up a and b', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: false }] });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    // The two 100 ms calls overlapped (one after another they could not finish under 200 ms).
    expect(executor.maxRunning).toBe(2);
    expect(performance.now() - started).toBeLessThan(400);
    assertEventStreamInvariants(events);
    expect(final.output.map((item) => item.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
    expect(final.output_text).toBe('found a, found b');
    expect(upstream.requests).toHaveLength(2);
  });

  it('loop: a client tool pauses with requires_action and the continuation finishes the turn', async () => {
    model = (seen) => {
      const results = seen.filter((entry) => entry.kind === 'result');
      if (results.length > 0) return { text: `done after ${results.length} results` };
      return { calls: [{ id: 'call_srv', name: 'lookup', args: { q: 'x' } }, { id: 'call_cli', name: 'ask_user', args: {} }] };
    };
    const tools = [
      { type: 'function' as const, name: 'lookup', parameters: { type: 'object' }, strict: false },
      { type: 'function' as const, name: 'ask_user', parameters: { type: 'object' }, strict: false },
    ];
    const paused = await client.responses.create({ model: flavor.model, input: 'go', tools });
    expect(paused.status).toBe('requires_action');
    const resumed = await client.responses.create({ model: flavor.model, previous_response_id: paused.id, tools, input: [{ type: 'function_call_output', call_id: 'call_cli', output: 'yes' }] });
    expect(resumed.status).toBe('completed');
    expect(resumed.output_text).toBe('done after 2 results');
  });

  it('MCP: an operator server\'s tool runs in the loop', async () => {
    model = (seen) => {
      const result = seen.find((entry): entry is Extract<Seen, { kind: 'result' }> => entry.kind === 'result');
      return result ? { text: `sum is ${result.content}` } : { calls: [{ id: 'call_add', name: 'tools__add', args: { a: 20, b: 22 } }] };
    };
    const response = await client.responses.create({ model: flavor.model, input: 'add' });
    assertValidResponse(response);
    expect(response.output_text).toBe('sum is 42');
  });
});
