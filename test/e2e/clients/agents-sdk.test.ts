import { Agent, hostedMcpTool, Runner, setTracingDisabled, tool } from '@openai/agents';
import { OpenAIConversationsSession, OpenAIProvider } from '@openai/agents-openai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { flavors, scriptModel, type ModelTurn, type ProviderFlavor, type Seen } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

// Traces would be exported to OpenAI; nothing leaves the machine in tests.
setTracingDisabled(true);

/** The names of the tools the gateway offered the model, in either upstream's wire format. */
const offeredTools = (flavor: ProviderFlavor, request: RecordedRequest): string[] => flavor.offeredTools(request).map((offered) => offered.name);

/** The MCP call the model made and the result it was shown (the gateway names the call after its mcp_call item). */
function mcpRoundTrip(request: RecordedRequest, seenOf: (request: RecordedRequest) => Seen[]): { args: unknown; result: string | undefined } {
  const seen = seenOf(request);
  const call = seen.find((entry) => entry.kind === 'call' && entry.name === 'calc__add') as Extract<Seen, { kind: 'call' }> | undefined;
  const result = seen.find((entry) => entry.kind === 'result' && entry.id === call?.id) as Extract<Seen, { kind: 'result' }> | undefined;
  return { args: call?.args, result: result?.content };
}

const weather = tool({ name: 'get_weather', description: 'Weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `windy in ${city}` });

/** The OpenAI Agents SDK (Responses model) against the gateway, over each upstream. */
describe.each(flavors)('Agents SDK over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let runner: Runner;
  let client: OpenAI;
  let mcpUrl: string;
  /** Bodies of the Responses requests the SDK sent the gateway. */
  const sent: any[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    const [url, serverUrl] = await Promise.all([upstream.start(), mcp.start()]);
    mcpUrl = serverUrl;
    gateway = await startGateway(url, { ...flavor.config(url), mcp: { allowedUrls: [`${new URL(serverUrl).origin}/`] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', maxRetries: 0, fetch: recordingFetch });
    runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it.each([false, true])('a function tool round trip (streamed: %s)', async (stream) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_ag', name: 'get_weather', args: { city: 'Dublin' } }] } : { text: `Dublin is ${results[0]}.` }));
    const agent = new Agent({ name: 'weather', model: flavor.model, instructions: 'Answer briefly.', tools: [weather] });
    let finalOutput: unknown;
    if (stream) {
      const streamed = await runner.run(agent, 'Weather in Dublin?', { stream: true });
      for await (const _event of streamed) {
        // drained
      }
      await streamed.completed;
      finalOutput = streamed.finalOutput;
    } else {
      finalOutput = (await runner.run(agent, 'Weather in Dublin?')).finalOutput;
    }
    expect(finalOutput).toBe('Dublin is windy in Dublin.');
    expect(sent.at(-1).stream ?? false).toBe(stream);
    const last = upstream.requests.at(-1)!;
    expect(offeredTools(flavor, last)).toEqual(['get_weather']);
    expect(flavor.seen(last)).toContainEqual({ kind: 'call', id: 'call_ag', name: 'get_weather', args: { city: 'Dublin' } });
    expect(flavor.seen(last)).toContainEqual({ kind: 'result', id: 'call_ag', content: 'windy in Dublin' });
  });

  it.each([false, true])('a function tool round trip over the Responses WebSocket mode (useResponsesWebSocket; streamed: %s)', async (stream) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_ws', name: 'get_weather', args: { city: 'Galway' } }] } : { text: `Galway is ${results[0]}.` }));
    const provider = new OpenAIProvider({ openAIClient: client as never, useResponses: true, useResponsesWebSocket: true });
    const wsRunner = new Runner({ modelProvider: provider, tracingDisabled: true });
    const agent = new Agent({ name: 'weather-ws', model: flavor.model, instructions: 'Answer briefly.', tools: [weather] });
    const requestsBefore = sent.length;
    try {
      let finalOutput: unknown;
      if (stream) {
        const streamed = await wsRunner.run(agent, 'Weather in Galway?', { stream: true });
        for await (const _event of streamed) {
          // drained
        }
        await streamed.completed;
        finalOutput = streamed.finalOutput;
      } else {
        finalOutput = (await wsRunner.run(agent, 'Weather in Galway?')).finalOutput;
      }
      expect(finalOutput).toBe('Galway is windy in Galway.');
    } finally {
      await provider.close();
    }
    // Both turns went over the socket, not as HTTP requests.
    expect(sent.length).toBe(requestsBefore);
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'result', id: 'call_ws', content: 'windy in Galway' });
  });

  it('a tool that answers with an image: the model is shown the image, whatever the upstream (a Chat Completions one takes it in a user message after the tool message)', async () => {
    const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const screenshot = tool({ name: 'screenshot', description: 'A screenshot of the page', parameters: z.object({}), execute: async () => [{ type: 'text' as const, text: 'the page:' }, { type: 'image' as const, image: pixel, detail: 'low' as const }] });
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_img', name: 'screenshot', args: {} }] } : { text: 'A single pixel.' }));
    const agent = new Agent({ name: 'looker', model: flavor.model, tools: [screenshot] });
    expect((await runner.run(agent, 'What is on the page?')).finalOutput).toBe('A single pixel.');
    // The SDK sent the image as a part of the function_call_output, as OpenAI's API takes it.
    expect(sent.at(-1).input.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'call_img', output: [{ type: 'input_text', text: 'the page:' }, { type: 'input_image', image_url: pixel, detail: 'low' }] });
    const last = upstream.requests.at(-1)!;
    expect(JSON.stringify(last.body)).toContain(pixel.slice('data:image/png;base64,'.length));
    if (flavor.name === 'openai-chat') {
      expect(last.body.messages.slice(-2)).toEqual([
        { role: 'tool', tool_call_id: 'call_img', content: 'the page:\n\n[1 image of this output is in the next user message]' },
        { role: 'user', content: [{ type: 'text', text: '1 image returned by tool call call_img:' }, { type: 'image_url', image_url: { url: pixel, detail: 'low' } }] },
      ]);
    }
  });

  it('structured output (outputType)', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Cork', celsius: 11 }) }));
    const agent = new Agent({ name: 'structured', model: flavor.model, outputType: z.object({ city: z.string(), celsius: z.number() }) });
    expect((await runner.run(agent, 'Weather in Cork as JSON.')).finalOutput).toEqual({ city: 'Cork', celsius: 11 });
    expect(sent.at(-1).text.format.type).toBe('json_schema');
    const format = flavor.format(upstream.requests.at(-1)!);
    const schema = format?.type === 'json_schema' ? (format.schema as any) : null;
    expect(Object.keys(schema.properties)).toEqual(['city', 'celsius']);
  });

  it('previousResponseId', async () => {
    const agent = new Agent({ name: 'memory', model: flavor.model });
    script(() => ({ text: 'Noted, Grace.' }));
    const first = await runner.run(agent, 'I am Grace.');
    script(() => ({ text: 'You are Grace.' }));
    const second = await runner.run(agent, 'Who am I?', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe('You are Grace.');
    expect(sent.at(-1).previous_response_id).toBe(first.lastResponseId);
    expect(flavor.seen(upstream.requests.at(-1)!).flatMap((seen) => ('text' in seen && seen.kind !== 'system' ? [seen.text] : []))).toEqual(['I am Grace.', 'Noted, Grace.', 'Who am I?']);
  });

  it('conversationId: each run sees the conversation so far, a tool round trip included, and the conversation keeps every item', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'I am Grace.' }] });
    const agent = new Agent({ name: 'conversing', model: flavor.model, tools: [weather] });
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_cv', name: 'get_weather', args: { city: 'Galway' } }] } : { text: `Grace, Galway is ${results[0]}.` }));
    const first = await runner.run(agent, 'Weather in Galway?', { conversationId: conversation.id });
    expect(first.finalOutput).toBe('Grace, Galway is windy in Galway.');
    expect(sent.at(-1).conversation).toBe(conversation.id);
    expect(sent.at(-1)).not.toHaveProperty('previous_response_id');
    script(() => ({ text: 'You are Grace.' }));
    const second = await runner.run(agent, 'Who am I?', { conversationId: conversation.id });
    expect(second.finalOutput).toBe('You are Grace.');
    const seen = flavor.seen(upstream.requests.at(-1)!).filter((entry) => entry.kind !== 'system');
    expect(seen).toEqual([
      { kind: 'user', text: 'I am Grace.' },
      { kind: 'user', text: 'Weather in Galway?' },
      { kind: 'call', id: 'call_cv', name: 'get_weather', args: { city: 'Galway' } },
      { kind: 'result', id: 'call_cv', content: 'windy in Galway' },
      { kind: 'assistant', text: 'Grace, Galway is windy in Galway.' },
      { kind: 'user', text: 'Who am I?' },
    ]);
    const items = [];
    for await (const item of client.conversations.items.list(conversation.id, { order: 'asc' })) items.push(item.type);
    expect(items).toEqual(['message', 'message', 'function_call', 'function_call_output', 'message', 'message', 'message']);
  });

  it('hosted MCP without approval', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_h', name: 'calc__add', args: { a: 5, b: 6 } }] } : { text: `It is ${results[0]}.` }));
    const agent = new Agent({ name: 'mcp', model: flavor.model, tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' })] });
    const sentBefore = sent.length;
    expect((await runner.run(agent, 'Add 5 and 6.')).finalOutput).toBe('It is 11.');
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 5, b: 6 } });
    // The gateway ran the call itself: one request from the SDK, the MCP tool offered upstream and its result shown to the model.
    expect(sent.length).toBe(sentBefore + 1);
    expect(sent.at(-1).tools).toEqual([expect.objectContaining({ type: 'mcp', server_label: 'calc', require_approval: 'never' })]);
    const last = upstream.requests.at(-1)!;
    expect(offeredTools(flavor, last)).toContain('calc__add');
    expect(mcpRoundTrip(last, flavor.seen)).toEqual({ args: { a: 5, b: 6 }, result: '11' });
  });

  it("hosted MCP in a conversation session (OpenAIConversationsSession): the SDK adds the turn's items with their ids stripped, MCP items included", async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_cs', name: 'calc__add', args: { a: 2, b: 40 } }] } : { text: `It is ${results[0]}.` }));
    const agent = new Agent({ name: 'mcp-session', model: flavor.model, tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' })] });
    const session = new OpenAIConversationsSession({ client: client as never });
    expect((await runner.run(agent, 'Add 2 and 40.', { session })).finalOutput).toBe('It is 42.');
    const conversationId = await session.getSessionId();
    const kept = await client.conversations.items.list(conversationId, { order: 'asc' });
    const types = kept.data.map((item) => item.type);
    expect(types[0]).toBe('message');
    expect(types).toEqual(expect.arrayContaining(['mcp_list_tools', 'mcp_call']));
    expect(types.at(-1)).toBe('message');
    for (const item of kept.data) expect(item.id).toMatch(/^(msg|mcpl|mcp|fc|fco|rs)_/);
    // The next turn reads the conversation back (the SDK keeps the MCP call without its output) and goes on.
    script(() => ({ text: 'Still 42.' }));
    expect((await runner.run(agent, 'And again?', { session })).finalOutput).toBe('Still 42.');
    expect(flavor.seen(upstream.requests.at(-1)!).filter((entry) => entry.kind === 'user').map((entry) => (entry as { text: string }).text)).toEqual(['Add 2 and 40.', 'And again?']);
  });

  it('hosted MCP streamed', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_hs', name: 'calc__add', args: { a: 9, b: 9 } }] } : { text: `It is ${results[0]}.` }));
    const agent = new Agent({ name: 'mcp-streamed', model: flavor.model, tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' })] });
    const streamed = await runner.run(agent, 'Add 9 and 9.', { stream: true });
    const items: string[] = [];
    for await (const event of streamed) if (event.type === 'run_item_stream_event') items.push(event.item.type);
    await streamed.completed;
    expect(streamed.finalOutput).toBe('It is 18.');
    expect(items).toContain('tool_call_item');
    expect(sent.at(-1).stream).toBe(true);
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 9, b: 9 } });
    expect(mcpRoundTrip(upstream.requests.at(-1)!, flavor.seen)).toEqual({ args: { a: 9, b: 9 }, result: '18' });
  });

  it('hosted MCP with an approval: the SDK resends the turn statelessly and the approved call runs', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_p', name: 'calc__add', args: { a: 30, b: 12 } }] } : { text: `It is ${results[0]}.` }));
    const agent = new Agent({ name: 'approving', model: flavor.model, tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'always' })] });
    const paused = await runner.run(agent, 'Add 30 and 12.');
    expect(paused.interruptions).toHaveLength(1);
    const callsBefore = mcp.calls.length;
    paused.state.approve(paused.interruptions[0]!);
    const resumed = await runner.run(agent, paused.state);
    expect(resumed.finalOutput).toBe('It is 42.');
    expect(mcp.calls.length).toBe(callsBefore + 1);
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 30, b: 12 } });
    // The resume is stateless: the whole turn resent, no previous_response_id.
    const resume = sent.at(-1);
    expect(resume.previous_response_id).toBeUndefined();
    expect((resume.input as any[]).map((item) => item.type ?? 'message')).toEqual(['message', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response']);
    expect(mcpRoundTrip(upstream.requests.at(-1)!, flavor.seen)).toEqual({ args: { a: 30, b: 12 }, result: '42' });
  });

  it.each([false, true])('hosted MCP with an approval in a conversation (conversationId): the SDK sends only the approval, the approved call runs (streamed: %s)', async (stream) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_cva', name: 'calc__add', args: { a: 7, b: 8 } }] } : { text: `It is ${results[0]}.` }));
    const agent = new Agent({ name: 'approving-in-conversation', model: flavor.model, tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'always' })] });
    const conversation = await client.conversations.create({});
    const drained = async (input: Parameters<Runner['run']>[1]) => {
      if (!stream) return runner.run(agent, input, { conversationId: conversation.id });
      const streamed = await runner.run(agent, input, { conversationId: conversation.id, stream: true });
      for await (const _event of streamed) {
        // drained
      }
      await streamed.completed;
      return streamed;
    };
    const paused = await drained('Add 7 and 8.');
    expect(paused.interruptions).toHaveLength(1);
    const callsBefore = mcp.calls.length;
    paused.state.approve(paused.interruptions[0]!);
    const resumed = await drained(paused.state);
    expect(resumed.finalOutput).toBe('It is 15.');
    expect(mcp.calls.length).toBe(callsBefore + 1);
    // The conversation holds the paused turn: the SDK sends the approval alone.
    const resume = sent.at(-1);
    expect(resume.conversation).toBe(conversation.id);
    expect((resume.input as any[]).map((item) => item.type)).toEqual(['mcp_approval_response']);
    expect(mcpRoundTrip(upstream.requests.at(-1)!, flavor.seen)).toEqual({ args: { a: 7, b: 8 }, result: '15' });
  });
});
