import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { OpenAIProvider } from '@openai/agents-openai';
import { generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RESULT_NOT_AVAILABLE } from '../../../src/engine/stored-item-to-input.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { assertValidEventWithMcpItems, assertValidResponseWithMcpItems } from '../../support/openresponses-schema.ts';
import { flavors, scriptModel, type ProviderFlavor } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

// Traces would be exported to OpenAI; nothing leaves the machine in tests.
setTracingDisabled(true);

/** A response body or event stream of the gateway's, each response and event valid. */
async function validated(response: Response): Promise<void> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) if (line.startsWith('data: {')) assertValidEventWithMcpItems(JSON.parse(line.slice(6)));
  } else {
    const body = JSON.parse(text) as { object?: string };
    if (body.object === 'response') assertValidResponseWithMcpItems(body);
  }
}

/** The tool results the model was shown in its last call, in the upstream's own format. */
const resultsShown = (flavor: ProviderFlavor, request: RecordedRequest): string[] => flavor.seen(request).flatMap((seen) => (seen.kind === 'result' ? [seen.content] : []));

/**
 * The gateway's own tools (an operator's MCP server, offered to every
 * request) under the agent frameworks: they run inside the gateway's loop, and
 * each client must take the response for what it is — a finished answer with
 * the gateway's calls in it — never for calls of its own to run. Shown as
 * `function_call` items, they made the Agents SDK throw ("Tool not found"),
 * the AI SDK refuse the response or answer the call itself with an error, and
 * LangChain report them as tool calls for the application to run.
 */
describe.each(flavors)('an operator MCP server under the agent frameworks, over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  /** Bodies of the requests the clients sent the gateway. */
  const sent: any[] = [];
  /** Every response and streamed event the gateway answered with, checked against the schema (MCP items against OpenAI's shapes) as the client reads them. */
  const checked: Promise<void>[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    const response = await fetch(input, init);
    if (response.ok) checked.push(validated(response.clone()));
    return response;
  };
  /** The model adds with the gateway's tool (and asks for the weather too, with `andWeather`), then answers with what it saw. */
  const modelAdding = (andWeather = false) =>
    scriptModel(upstream, flavor, (_request, results) =>
      results.length === 0
        ? { calls: [{ id: 'call_add', name: 'ops__add', args: { a: 2, b: 3 } }, ...(andWeather ? [{ id: 'call_weather', name: 'get_weather', args: { city: 'Oslo' } }] : [])] }
        : { text: `Seen: ${[...results].sort().join(' | ')}` },
    );

  beforeAll(async () => {
    const [url, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(url, { ...flavor.config(url), mcp: { servers: [{ name: 'ops', url: mcpUrl, allowedTools: ['add'] }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', maxRetries: 0, fetch: recordingFetch });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    sent.length = 0;
    mcp.calls.length = 0;
  });
  afterEach(async () => {
    await Promise.all(checked.splice(0));
  });

  it.each([false, true])('the Agents SDK takes the answer, the gateway having run the call (streamed: %s)', async (stream) => {
    modelAdding();
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    const agent = new Agent({ name: 'adder', model: flavor.model, instructions: 'Answer briefly.' });
    let finalOutput: unknown;
    if (stream) {
      const streamed = await runner.run(agent, 'Add 2 and 3.', { stream: true });
      for await (const _event of streamed) {
        // drained
      }
      await streamed.completed;
      finalOutput = streamed.finalOutput;
    } else {
      finalOutput = (await runner.run(agent, 'Add 2 and 3.')).finalOutput;
    }
    expect(finalOutput).toBe('Seen: 5');
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 2, b: 3 } }]);
    expect(sent).toHaveLength(1);
  });

  it("a terminal tool ends the Agents SDK's run too: its output is the final output, no second model call", async () => {
    modelAdding();
    const calls = upstream.requests.length;
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    const agent = new Agent({ name: 'adder', model: flavor.model, modelSettings: { providerData: { 'loopgate:loop': { terminal_tools: ['ops__add'] } } } });
    const result = await runner.run(agent, 'Add 2 and 3.');
    expect(result.finalOutput).toBe('5');
    expect(sent).toHaveLength(1);
    expect(upstream.requests.length - calls).toBe(1);
    expect(mcp.calls).toHaveLength(1);
  });

  it('the Agents SDK runs its own tool of the same turn, and the gateway the operator tool, once each', async () => {
    modelAdding(true);
    const weather = agentTool({ name: 'get_weather', description: 'Weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `windy in ${city}` });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    const result = await runner.run(new Agent({ name: 'both', model: flavor.model, tools: [weather] }), 'Add 2 and 3, and the weather in Oslo?');
    expect(result.finalOutput).toBe('Seen: 5 | windy in Oslo');
    expect(mcp.calls).toHaveLength(1);
    expect(resultsShown(flavor, upstream.requests.at(-1)!).sort()).toEqual(['5', 'windy in Oslo']);
  });

  it("with store: false the Agents SDK resends the gateway's call without its result: the model is told the result is not available, never shown an empty one", async () => {
    modelAdding(true);
    const weather = agentTool({ name: 'get_weather', description: 'Weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `windy in ${city}` });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    await runner.run(new Agent({ name: 'both', model: flavor.model, tools: [weather], modelSettings: { store: false } }), 'Add 2 and 3, and the weather in Oslo?');
    expect(sent[1].input.find((item: any) => item.type === 'mcp_call')).not.toHaveProperty('output');
    expect(resultsShown(flavor, upstream.requests.at(-1)!).sort()).toEqual([RESULT_NOT_AVAILABLE, 'windy in Oslo']);
    expect(mcp.calls).toHaveLength(1);
  });

  it.each([false, true])('the AI SDK takes the answer in one step, with no tool error (streamed: %s)', async (stream) => {
    modelAdding();
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', fetch: recordingFetch });
    const weather = aiTool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `windy in ${city}` });
    const options = { model: openai.responses(flavor.model), prompt: 'Add 2 and 3.', tools: { get_weather: weather }, stopWhen: stepCountIs(3) };
    if (stream) {
      const result = streamText(options);
      const parts: string[] = [];
      for await (const part of result.fullStream) parts.push(part.type);
      expect(parts).not.toContain('error');
      expect(parts).not.toContain('tool-error');
      expect(await result.text).toBe('Seen: 5');
      expect(await result.finishReason).toBe('stop');
      expect(await result.steps).toHaveLength(1);
    } else {
      const result = await generateText(options);
      expect(result.text).toBe('Seen: 5');
      expect(result.finishReason).toBe('stop');
      expect(result.steps).toHaveLength(1);
      expect(result.steps[0]!.content.filter((part) => part.type === 'tool-error')).toEqual([]);
    }
    // One request: the SDK did not come back to answer the gateway's call itself.
    expect(sent).toHaveLength(1);
    expect(mcp.calls).toHaveLength(1);
  });

  it('the AI SDK runs its own tool of the same turn and the model sees both real results', async () => {
    modelAdding(true);
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', fetch: recordingFetch });
    const weather = aiTool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `windy in ${city}` });
    const result = await generateText({ model: openai.responses(flavor.model), prompt: 'Add 2 and 3, and the weather in Oslo?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe('Seen: 5 | windy in Oslo');
    expect(mcp.calls).toHaveLength(1);
    expect(resultsShown(flavor, upstream.requests.at(-1)!).sort()).toEqual(['5', 'windy in Oslo']);
  });

  // A model calling a tool of the server the gateway does not offer (not in its allowedTools, or none such): refused, the model told why, and shown as the server's calls are.
  it.each(['ops__subtract', 'ops__no_such_tool'])('a refused call to %s: every framework takes the answer; the call shows as an mcp_call with its error', async (name) => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_refused', name, args: { a: 2, b: 3 } }] } : { text: `Seen: ${results.join(' | ')}` }));
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    const agents = await runner.run(new Agent({ name: 'adder', model: flavor.model }), 'Subtract 3 from 2.');
    expect(agents.finalOutput).toMatch(/^Seen: .*error/);
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', fetch: recordingFetch });
    const ai = await generateText({ model: openai.responses(flavor.model), prompt: 'Subtract 3 from 2.', stopWhen: stepCountIs(3) });
    expect(ai.text).toMatch(/^Seen: .*error/);
    expect(ai.steps).toHaveLength(1);
    const langchain = await new ChatOpenAI({ model: flavor.model, useResponsesApi: true, apiKey: 'client-key', configuration: { baseURL: gateway.baseURL, fetch: recordingFetch } }).invoke('Subtract 3 from 2.');
    expect(langchain.tool_calls ?? []).toEqual([]);
    const response = await client.responses.create({ model: flavor.model, input: 'Subtract 3 from 2.' });
    expect(response.output.map((item) => item.type)).toEqual(['mcp_call', 'message']);
    const [call] = response.output as [OpenAI.Responses.ResponseOutputItem.McpCall];
    expect(call).toMatchObject({ server_label: 'ops', name: name.slice('ops__'.length), error: expect.any(String) });
    expect(mcp.calls).toEqual([]);
  });

  it.each([false, true])('LangChain gets the answer with no tool calls for the application to run (streamed: %s)', async (stream) => {
    modelAdding();
    const model = new ChatOpenAI({ model: flavor.model, useResponsesApi: true, apiKey: 'client-key', configuration: { baseURL: gateway.baseURL, fetch: recordingFetch } });
    let text = '';
    const toolCalls: unknown[] = [];
    if (stream) {
      for await (const chunk of await model.stream('Add 2 and 3.')) {
        text += chunk.text;
        toolCalls.push(...(chunk.tool_calls ?? []));
      }
    } else {
      const message = await model.invoke('Add 2 and 3.');
      text = message.text;
      toolCalls.push(...(message.tool_calls ?? []));
    }
    expect(text).toBe('Seen: 5');
    expect(toolCalls).toEqual([]);
    expect(mcp.calls).toHaveLength(1);
  });
});
