import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, type ProviderFlavor, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * Models without native tool calling, behind the gateway's text tool-call
 * protocol (`toolCalls: "text"`). The scripted upstream has no tool support:
 * like a real server, it answers 400 to any request carrying tools,
 * tool_choice or tool items — so every passing test also proves none was sent.
 */

/** How each flavor is configured: openai-chat per model (an alias), the others per provider. */
function textToolConfig(flavor: ProviderFlavor, upstreamUrl: string): { config: Record<string, any>; model: string } {
  const config = flavor.config(upstreamUrl) as Record<string, any>;
  if (flavor.name === 'openai-chat') return { config: { ...config, models: { 'plain-model': { provider: 'openai', model: 'upstream-plain', toolCalls: 'text' } } }, model: 'plain-model' };
  config.providers[flavor.provider].toolCalls = 'text';
  return { config, model: flavor.model };
}

/** What a server without tool support answers a request that has any. */
function refuseTools(flavor: ProviderFlavor, request: RecordedRequest): UpstreamReply | null {
  const toolItems = flavor.seen(request).some((seen) => seen.kind === 'call' || seen.kind === 'result');
  if (!flavor.mentionsTools(request) && !toolItems) return null;
  return flavor.refusal(400, 'This model does not support tools.');
}

interface SeenResult {
  callId: string;
  name: string;
  output: string;
}

/** The tool results the model was shown, read back from the user messages they travel in. */
function resultsIn(seen: Seen[]): SeenResult[] {
  const results: SeenResult[] = [];
  for (const entry of seen) {
    if (entry.kind !== 'user') continue;
    for (const match of entry.text.matchAll(/Result of tool call (call_\w+) \(([\w-]+)\):\n(.*)/g)) results.push({ callId: match[1]!, name: match[2]!, output: match[3]! });
  }
  return results;
}

/** `text` in pieces of `size` characters, as a model streams it. */
function inPieces(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

/** Output text deltas must never carry any part of a call's JSON. */
function assertNoCallText(events: any[]): string[] {
  const deltas = events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta as string);
  for (const delta of deltas) expect(delta).not.toMatch(/[{}`]|"tool"|parameters|terminate/);
  return deltas;
}

describe.each(flavors)('text tool calls over $name, to an upstream without tool support', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  let model: string;
  let refusals = 0;

  /** Scripts the model: what it writes, from what it has been shown (`null`: the gateway must not ask again). */
  function scriptText(reply: (seen: Seen[], results: SeenResult[], call: number) => string | string[] | null): void {
    let calls = 0;
    upstream.setScript((request) => {
      const refusal = refuseTools(flavor, request);
      if (refusal) {
        refusals++;
        return refusal;
      }
      const seen = flavor.seen(request);
      const text = reply(seen, resultsIn(seen), ++calls) ?? 'This model call should not have happened.';
      return flavor.render(request, { textPieces: typeof text === 'string' ? [text] : text });
    });
  }

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    const setup = textToolConfig(flavor, upstreamUrl);
    model = setup.model;
    gateway = await startGateway(upstreamUrl, { ...setup.config, mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add'] }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    mcp.calls.length = 0;
    refusals = 0;
  });
  afterEach(() => {
    expect(refusals, 'requests the tool-less upstream refused').toBe(0);
  });

  it('a fenced call to a server-side MCP tool runs in the gateway; the model sees the result as text and answers with it', async () => {
    scriptText((_seen, results) => (results.length === 0 ? 'I will add them.\n```json\n{"tool": "tools__add", "parameters": {"a": 2, "b": 3}}\n```\n' : `The sum is ${results[0]!.output}.`));
    const response = await client.responses.create({ model, input: 'What is 2 + 3?' });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    const [prose, call, output, answer] = response.output as any[];
    expect(prose.content[0].text).toBe('I will add them.');
    expect(call).toMatchObject({ type: 'function_call', name: 'tools__add', arguments: '{"a":2,"b":3}', call_id: expect.stringMatching(/^call_/) });
    expect(output).toMatchObject({ type: 'function_call_output', call_id: call.call_id, output: '5' });
    expect(answer.content[0].text).toBe('The sum is 5.');
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 2, b: 3 } }]);

    expect(upstream.requests).toHaveLength(2);
    const [first, second] = upstream.requests.map((request) => flavor.seen(request));
    const system = first!.find((entry) => entry.kind === 'system');
    expect(system && system.text).toContain('## tools__add\nAdds two numbers.\nParameters: {');
    expect(second).toContainEqual({ kind: 'assistant', text: 'I will add them.\n\n{"tool":"tools__add","parameters":{"a":2,"b":3}}' });
    expect(resultsIn(second!)).toEqual([{ callId: call.call_id, name: 'tools__add', output: '5' }]);
  });

  it("the tools join the client's own system message: one system message, first, as strict chat templates require", async () => {
    scriptText(() => 'Hello.');
    for (const role of ['system', 'developer'] as const) {
      upstream.requests.length = 0;
      await client.responses.create({ model, input: [{ role, content: 'You are terse.' }, { role: 'user', content: 'Hi' }] });
      const seen = flavor.seen(upstream.requests[0]!);
      const systems = seen.filter((entry) => entry.kind === 'system');
      expect(systems).toHaveLength(1);
      expect(seen[0]?.kind === 'system' && seen[0].text).toMatch(/^You are terse\.\n\n[^]*## tools__add/);
    }
    // With instructions of its own, the tools follow them, and the client's system message is left as it sent it.
    upstream.requests.length = 0;
    await client.responses.create({ model, instructions: 'Be kind.', input: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' }] });
    const texts = flavor.seen(upstream.requests[0]!).flatMap((entry) => (entry.kind === 'system' ? [entry.text] : []));
    expect(texts.join('\n\n')).toMatch(/^Be kind\.\n\n[^]*## tools__add[^]*You are terse\.$/);
  });

  it('streamed: the prose streams before the call, no fragment of the call JSON reaches an output_text delta, every event is schema-valid', async () => {
    const calling = 'I will add them.\n\n{"tool": "tools__add", "parameters": {"a": 40, "b": 2}, "terminate": false}';
    scriptText((_seen, results) => (results.length === 0 ? inPieces(calling, 3) : inPieces(`The sum is ${results[0]!.output}.`, 4)));
    const stream = client.responses.stream({ model, input: 'What is 40 + 2?' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(assertNoCallText(events).join('')).toBe('I will add them.The sum is 42.');
    const firstText = events.findIndex((event) => event.type === 'response.output_text.delta');
    const callAdded = events.findIndex((event) => event.type === 'response.output_item.added' && event.item.type === 'function_call');
    expect(firstText).toBeGreaterThan(-1);
    expect(firstText).toBeLessThan(callAdded);
    expect(events.filter((event) => event.type === 'response.function_call_arguments.done').map((event) => event.arguments)).toEqual(['{"a":40,"b":2}']);
    expect(final.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 40, b: 2 } }]);
  });

  it('a client function tool pauses with requires_action and a standard function_call; its function_call_output reaches the model as text', async () => {
    scriptText((_seen, results) => (results.length === 0 ? inPieces('{"tool": "get_weather", "parameters": {"city": "Paris"}}', 2) : `It is ${JSON.parse(results[0]!.output).temp} degrees in Paris.`));
    const paused = await client.responses.create({ model, input: 'Weather in Paris?', tools: [weatherTool] });
    assertValidResponse(paused);
    expect(paused.status).toBe('requires_action');
    expect(paused.output).toHaveLength(1);
    const call = paused.output[0] as any;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed', call_id: expect.stringMatching(/^call_/) });

    const answered = await client.responses.create({ model, previous_response_id: paused.id, tools: [weatherTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp": 14}' }] });
    assertValidResponse(answered);
    expect(answered.status).toBe('completed');
    expect(answered.output_text).toBe('It is 14 degrees in Paris.');
    const seen = flavor.seen(upstream.requests[1]!);
    expect(seen).toContainEqual({ kind: 'assistant', text: '{"tool":"get_weather","parameters":{"city":"Paris"}}' });
    expect(resultsIn(seen)).toEqual([{ callId: call.call_id, name: 'get_weather', output: '{"temp": 14}' }]);
  });

  it('streamed, a client tool call arrives as function_call events only', async () => {
    scriptText(() => inPieces('```json\n{"tool": "get_weather", "parameters": {"city": "Lima"}}\n```', 5));
    const stream = client.responses.stream({ model, input: 'Weather in Lima?', tools: [weatherTool] });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(assertNoCallText(events)).toEqual([]);
    expect(final.status).toBe('requires_action');
    expect(final.output).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: '{"city":"Lima"}' }]);
  });

  it('a malformed call is retried with feedback the model sees, and the corrected call is taken; usage counts both model calls', async () => {
    scriptText((seen, _results, call) => {
      if (call === 1) return 'Let me check.\n{"tool": "get_weather", "parameters": {"city": "Paris"},}';
      const feedback = seen.filter((entry) => entry.kind === 'user').at(-1)!.text;
      return feedback.startsWith('Your last reply could not be used') ? '{"tool": "get_weather", "parameters": {"city": "Paris"}}' : 'no feedback seen';
    });
    const response = await client.responses.create({ model, input: 'Weather in Paris?', tools: [weatherTool] });
    assertValidResponse(response);
    expect(upstream.requests).toHaveLength(2);
    const retried = flavor.seen(upstream.requests[1]!);
    expect(retried).toContainEqual({ kind: 'assistant', text: 'Let me check.\n{"tool": "get_weather", "parameters": {"city": "Paris"},}' });
    expect(retried.at(-1)).toMatchObject({ kind: 'user', text: expect.stringMatching(/^Your last reply could not be used: the tool call is not valid JSON \(/) });
    expect(response.status).toBe('requires_action');
    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    expect((response.output[0] as any).content[0].text).toBe('Let me check.');
    expect(response.output[1]).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(response.usage).toMatchObject({ input_tokens: 20, output_tokens: 10 });
  });

  it('a call still broken after every retry fails the response with invalid_tool_call, schema-valid when streamed', async () => {
    scriptText(() => '{"tool": "tools__add", "parameters": [2, 3]}');
    const stream = client.responses.stream({ model, input: 'What is 2 + 3?' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(final.status).toBe('failed');
    expect(final.error).toEqual({ code: 'invalid_tool_call', message: 'The model\'s tool call could not be read (3 attempts): "parameters" of the call to tools__add must be a JSON object (use {} when the tool takes no arguments).', type: 'server_error' });
    expect(upstream.requests).toHaveLength(3);
    expect(mcp.calls).toEqual([]);
    assertNoCallText(events);
  });

  it('parallel_tool_calls: false: a reply with two calls is sent back (a native model makes one at most), and the single call it then makes is taken', async () => {
    const two = '{"tool": "tools__add", "parameters": {"a": 1, "b": 2}}\n{"tool": "tools__add", "parameters": {"a": 3, "b": 4}}';
    scriptText((seen, results, call) => (call === 1 ? two : results.length === 0 ? '{"tool": "tools__add", "parameters": {"a": 1, "b": 2}}' : `The sum is ${results[0]!.output}.`));
    const response = await client.responses.create({ model, input: 'Add 1 and 2, then 3 and 4.', parallel_tool_calls: false });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.filter((item) => item.type === 'function_call')).toHaveLength(1);
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 1, b: 2 } }]);
    const feedback = flavor.seen(upstream.requests[1]!).filter((entry) => entry.kind === 'user').at(-1);
    expect(feedback && 'text' in feedback && feedback.text).toContain('at most one');
  });

  it('plain answers pass through untouched, braces and all', async () => {
    scriptText(() => inPieces('No tool needed: the set {1, 2} has two elements.', 6));
    const response = await client.responses.create({ model, input: 'How many elements has {1, 2}?', tools: [weatherTool] });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('No tool needed: the set {1, 2} has two elements.');
  });

  it('terminate: true runs the tool and ends the response completed, without another model call, streamed or not', async () => {
    const finalCall = 'Adding, and that is all.\n{"tool": "tools__add", "parameters": {"a": 1, "b": 1}, "terminate": true}';
    scriptText((_seen, _results, call) => (call === 1 ? inPieces(finalCall, 7) : null));
    const response = await client.responses.create({ model, input: 'Add 1 and 1, then stop.' });
    scriptText((_seen, _results, call) => (call === 1 ? inPieces(finalCall, 7) : null));
    const stream = client.responses.stream({ model, input: 'Add 1 and 1, then stop.' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const streamed = assertEventStreamInvariants(events);
    assertNoCallText(events);
    expect(mcp.calls).toEqual([
      { name: 'add', args: { a: 1, b: 1 } },
      { name: 'add', args: { a: 1, b: 1 } },
    ]);
    expect(upstream.requests).toHaveLength(2);
    for (const final of [response, streamed] as any[]) {
      assertValidResponse(final);
      expect(final.status).toBe('completed');
      expect(final.output.map((item: any) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
      expect(final.output[0].content[0].text).toBe('Adding, and that is all.');
      expect(final.output[2]).toMatchObject({ call_id: final.output[1].call_id, output: '2' });
      expect(final.output[3].content[0].text).toBe('2');
      expect(final['loopgate:loop']).toEqual({ ended_by: { type: 'terminal_tool', name: 'tools__add', call_id: final.output[1].call_id } });
    }
  });
});
