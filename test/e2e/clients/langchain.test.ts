import { HumanMessage, SystemMessage, ToolMessage, type AIMessage, type AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI, tools as openaiTools } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JSON_OBJECT_INSTRUCTION } from '../../../src/providers/anthropic/convert-to-anthropic-request.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { flavors, scriptModel, type ModelTurn, type ProviderFlavor } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

const weather = { name: 'get_weather', description: 'Weather in a city', schema: z.object({ city: z.string() }) };

/** The tools the gateway offered the model, as name and JSON schema, in either upstream's wire format. */
const offeredTools = (flavor: ProviderFlavor, request: RecordedRequest): { name: string; schema: any }[] => flavor.offeredTools(request).map((offered) => ({ name: offered.name, schema: offered.parameters }));

/** The JSON schema the upstream was told to answer in, in either upstream's wire format. */
const requestedSchema = (flavor: ProviderFlavor, request: RecordedRequest): any => {
  const format = flavor.format(request);
  return format?.type === 'json_schema' ? format.schema : undefined;
};

/** LangChain's ChatOpenAI with `useResponsesApi: true` against the gateway, over each upstream. */
describe.each(flavors)('LangChain over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  /** Bodies of the Responses requests LangChain sent the gateway. */
  const sent: any[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  const chat = (options: { streaming?: boolean } = {}) =>
    new ChatOpenAI({ model: flavor.model, apiKey: 'client-key', useResponsesApi: true, maxRetries: 0, configuration: { baseURL: gateway.baseURL, fetch: recordingFetch }, ...options });
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    sent.length = 0;
    upstream.requests.length = 0;
  });

  it('invoke: the system and user messages reach the model, the answer and usage come back', async () => {
    script(() => ({ text: 'Hello from the gateway.' }));
    const answer = await chat().invoke([new SystemMessage('Be brief.'), new HumanMessage('Say hello.')]);
    expect(answer.text).toBe('Hello from the gateway.');
    expect(answer.id).toMatch(/^resp_/);
    expect(answer.usage_metadata).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    expect(sent).toEqual([expect.objectContaining({ model: flavor.model, stream: false })]);
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.requestedModel(upstream.requests[0]!)).toBe(flavor.model);
    expect(flavor.seen(upstream.requests[0]!)).toEqual([
      { kind: 'system', text: 'Be brief.' },
      { kind: 'user', text: 'Say hello.' },
    ]);
  });

  it('stream: text arrives in chunks, the upstream is streamed', async () => {
    script(() => ({ text: 'Streaming works.' }));
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await chat().stream('Stream something.')) merged = merged ? merged.concat(chunk) : chunk;
    expect(merged!.text).toBe('Streaming works.');
    expect(merged!.usage_metadata).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    expect(sent).toEqual([expect.objectContaining({ stream: true })]);
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.streamed(upstream.requests[0]!)).toBe(true);
    expect(flavor.seen(upstream.requests[0]!)).toEqual([{ kind: 'user', text: 'Stream something.' }]);
  });

  it.each([false, true])('bindTools round trip (streamed: %s): strict: null is accepted, the tool result reaches the model', async (streamed) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_lc', name: 'get_weather', args: { city: 'Oslo' } }] } : { text: `Oslo: ${results[0]}` }));
    const model = chat({ streaming: streamed }).bindTools([weather]);
    const question = new HumanMessage('Weather in Oslo?');
    let first: AIMessage | AIMessageChunk;
    if (streamed) {
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await model.stream([question])) merged = merged ? merged.concat(chunk) : chunk;
      first = merged!;
    } else {
      first = await model.invoke([question]);
    }
    expect(first.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Oslo' }, id: 'call_lc' })]);
    // LangChain declares its tools with `strict: null`, which OpenAI accepts.
    expect(sent[0].tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_weather', strict: null })]);
    expect(sent[0].stream).toBe(streamed);
    expect(offeredTools(flavor, upstream.requests[0]!)).toEqual([{ name: 'get_weather', schema: expect.objectContaining({ properties: { city: { type: 'string' } }, required: ['city'] }) }]);

    const answer = await model.invoke([question, first, new ToolMessage({ tool_call_id: 'call_lc', content: '3°C and snow' })]);
    expect(answer.text).toBe('Oslo: 3°C and snow');
    // LangChain resends the call and its output statelessly, without previous_response_id.
    expect(sent[1].previous_response_id).toBeUndefined();
    expect(sent[1].input.map((item: any) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(upstream.requests).toHaveLength(2);
    expect(flavor.seen(upstream.requests[1]!)).toEqual([
      { kind: 'user', text: 'Weather in Oslo?' },
      { kind: 'call', id: 'call_lc', name: 'get_weather', args: { city: 'Oslo' } },
      { kind: 'result', id: 'call_lc', content: '3°C and snow' },
    ]);
    expect(offeredTools(flavor, upstream.requests[1]!).map((offered) => offered.name)).toEqual(['get_weather']);
  });

  it('previous_response_id call option: the stored turn reaches the model before the new message', async () => {
    script(() => ({ text: 'Hi Ada.' }));
    const first = await chat().invoke('I am Ada.');
    script(() => ({ text: 'You are Ada.' }));
    const second = await chat().invoke([new HumanMessage('Who am I?')], { previous_response_id: first.id });
    expect(second.text).toBe('You are Ada.');
    expect(sent[1]).toMatchObject({ previous_response_id: first.id, input: [expect.objectContaining({ role: 'user', content: 'Who am I?' })] });
    expect(upstream.requests).toHaveLength(2);
    expect(flavor.seen(upstream.requests[1]!)).toEqual([
      { kind: 'user', text: 'I am Ada.' },
      { kind: 'assistant', text: 'Hi Ada.' },
      { kind: 'user', text: 'Who am I?' },
    ]);
  });

  it('withStructuredOutput: the schema reaches the model, the parsed object comes back', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Lima', celsius: 19 }) }));
    const structured = chat().withStructuredOutput(z.object({ city: z.string(), celsius: z.number() }), { name: 'weather' });
    expect(await structured.invoke('Weather in Lima as JSON.')).toEqual({ city: 'Lima', celsius: 19 });
    expect(sent[0].text.format).toMatchObject({ type: 'json_schema', name: 'weather', strict: true });
    expect(upstream.requests).toHaveLength(1);
    const schema = requestedSchema(flavor, upstream.requests[0]!);
    expect(Object.keys(schema.properties)).toEqual(['city', 'celsius']);
    expect(schema.required).toEqual(['city', 'celsius']);
  });

  it('withStructuredOutput in jsonMode: the upstream is asked for a JSON object (natively, or told so where it has no JSON mode)', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Quito', celsius: 14 }) }));
    const structured = chat().withStructuredOutput(z.object({ city: z.string(), celsius: z.number() }), { name: 'weather', method: 'jsonMode' });
    expect(await structured.invoke('Weather in Quito as JSON.')).toEqual({ city: 'Quito', celsius: 14 });
    expect(sent[0].text.format).toEqual({ type: 'json_object' });
    expect(upstream.requests).toHaveLength(1);
    // Anthropic's API has no JSON mode: the gateway asks for JSON in the system prompt instead.
    const request = upstream.requests[0]!;
    if (flavor.name === 'anthropic') expect(flavor.seen(request).filter((entry) => entry.kind === 'system')).toEqual([{ kind: 'system', text: JSON_OBJECT_INSTRUCTION }]);
    else expect(flavor.format(request)).toEqual({ type: 'json_object' });
  });
});

/** LangChain's own MCP tool (`tools.mcp` from @langchain/openai), bound to ChatOpenAI: what it sends for a server the request names. */
describe.each(flavors)('LangChain tools.mcp over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer('streamable', { records: true });
  let gateway: RunningGateway;
  let mcpUrl: string;
  const sent: any[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  beforeAll(async () => {
    const [url, serverUrl] = await Promise.all([upstream.start(), mcp.start()]);
    mcpUrl = serverUrl;
    gateway = await startGateway(url, { ...flavor.config(url), mcp: { allowedUrls: [`${new URL(serverUrl).origin}/`] } });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('authorization and a read-only allowedTools filter: the server gets the bearer token, the model only the read-only tool, and the call runs', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_r', name: 'records__lookup', args: { id: 'r1' } }] } : { text: `Read: ${results[0]}` }));
    mcp.headers.length = 0;
    const before = upstream.requests.length;
    const model = new ChatOpenAI({ model: flavor.model, apiKey: 'client-key', useResponsesApi: true, maxRetries: 0, configuration: { baseURL: gateway.baseURL, fetch: recordingFetch } });
    const bound = model.bindTools([openaiTools.mcp({ serverLabel: 'records', serverUrl: mcpUrl, authorization: 'oauth-token', allowedTools: { readOnly: true }, requireApproval: 'never' })]);
    const answer = await bound.invoke('Read record r1.');
    expect(answer.text).toBe('Read: first record');
    expect(sent.at(-1).tools).toEqual([expect.objectContaining({ type: 'mcp', server_label: 'records', authorization: 'oauth-token', allowed_tools: { read_only: true } })]);
    expect(mcp.headers.length).toBeGreaterThan(0);
    expect(mcp.headers.every((headers) => headers.authorization === 'Bearer oauth-token')).toBe(true);
    expect(flavor.offeredTools(upstream.requests[before]!).map((tool) => tool.name)).toEqual(['records__lookup']);
    expect(mcp.calls.at(-1)).toEqual({ name: 'lookup', args: { id: 'r1' } });
  });
});
