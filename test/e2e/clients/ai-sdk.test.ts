import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamText, tool, type Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { flavors, scriptModel, type ModelTurn, type ProviderFlavor, type Seen } from '../../support/provider-flavors.ts';
import { fixture, ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

/** `openai.tools.mcp`, typed as `ai`'s Tool (the two packages pin different provider-utils typings). */
function mcpTool(openai: ReturnType<typeof createOpenAI>, args: Parameters<ReturnType<typeof createOpenAI>['tools']['mcp']>[0]): Tool {
  return openai.tools.mcp(args) as unknown as Tool;
}

/** The names of the tools the gateway offered the model, in either upstream's wire format. */
const offeredTools = (flavor: ProviderFlavor, request: RecordedRequest): string[] => flavor.offeredTools(request).map((offered) => offered.name);

/** The MCP call the model made and the result it was shown (the gateway names the call after its mcp_call item). */
function mcpRoundTrip(request: RecordedRequest, seenOf: (request: RecordedRequest) => Seen[]): { args: unknown; result: string | undefined } {
  const seen = seenOf(request);
  const call = seen.find((entry) => entry.kind === 'call' && entry.name === 'calc__add') as Extract<Seen, { kind: 'call' }> | undefined;
  const result = seen.find((entry) => entry.kind === 'result' && entry.id === call?.id) as Extract<Seen, { kind: 'result' }> | undefined;
  return { args: call?.args, result: result?.content };
}

/** The Vercel AI SDK (`ai` + `@ai-sdk/openai`, `openai.responses(model)`) against the gateway, over each upstream. */
describe.each(flavors)('AI SDK over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let mcpUrl: string;
  let openai: ReturnType<typeof createOpenAI>;
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
    openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', fetch: recordingFetch });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('generateText', async () => {
    script(() => ({ text: 'Bonjour.' }));
    const result = await generateText({ model: openai.responses(flavor.model), prompt: 'Say hello in French.' });
    expect(result.text).toBe('Bonjour.');
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'user', text: 'Say hello in French.' });
  });

  it("a prompt-cache breakpoint set on a message part (providerOptions.openai.promptCacheBreakpoint) reaches the upstream as that upstream's cache mark, or is passed on", async () => {
    script(() => ({ text: 'Read it.' }));
    const result = await generateText({
      model: openai.responses(flavor.model),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'A long shared document.', providerOptions: { openai: { promptCacheBreakpoint: { mode: 'explicit' } } } }, { type: 'text', text: 'Summarize it.' }] }],
    });
    expect(result.text).toBe('Read it.');
    expect(sent.at(-1).input[0].content[0]).toMatchObject({ type: 'input_text', prompt_cache_breakpoint: { mode: 'explicit' } });
    const body = upstream.requests.at(-1)!.body;
    if (flavor.name === 'anthropic') expect(body.messages[0].content[0]).toEqual({ type: 'text', text: 'A long shared document.', cache_control: { type: 'ephemeral' } });
    if (flavor.name === 'openai-responses') expect(body.input[0].content[0]).toEqual({ type: 'input_text', text: 'A long shared document.', prompt_cache_breakpoint: { mode: 'explicit' } });
  });

  it('streamText, read through fullStream', async () => {
    script(() => ({ text: 'One, two, three.' }));
    const result = streamText({ model: openai.responses(flavor.model), prompt: 'Count.' });
    const parts: string[] = [];
    let text = '';
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'error') throw part.error;
    }
    expect(text).toBe('One, two, three.');
    expect(parts).toContain('finish');
    expect(sent.at(-1).stream).toBe(true);
    expect(flavor.streamed(upstream.requests.at(-1)!)).toBe(true);
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'user', text: 'Count.' });
  });

  it('multi-step tools: the SDK runs the tool and sends the result back', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }] } : { text: `It is ${results[0]}.` }));
    const result = await generateText({
      model: openai.responses(flavor.model),
      prompt: 'Weather in Paris?',
      tools: { weather: tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('It is sunny in Paris.');
    expect(result.steps).toHaveLength(2);
    const last = upstream.requests.at(-1)!;
    expect(offeredTools(flavor, last)).toEqual(['weather']);
    expect(flavor.seen(last)).toContainEqual({ kind: 'call', id: 'call_w', name: 'weather', args: { city: 'Paris' } });
    expect(flavor.seen(last)).toContainEqual({ kind: 'result', id: 'call_w', content: 'sunny in Paris' });
  });

  it('generateObject', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Paris', celsius: 14 }) }));
    const { object } = await generateObject({ model: openai.responses(flavor.model), schema: z.object({ city: z.string(), celsius: z.number() }), prompt: 'Weather as JSON.' });
    expect(object).toEqual({ city: 'Paris', celsius: 14 });
    expect(sent.at(-1).text.format.type).toBe('json_schema');
    const format = flavor.format(upstream.requests.at(-1)!);
    const schema = format?.type === 'json_schema' ? (format.schema as any) : null;
    expect(Object.keys(schema.properties)).toEqual(['city', 'celsius']);
  });

  it('previousResponseId continues a stored conversation', async () => {
    script(() => ({ text: 'Hi Ada.' }));
    const first = await generateText({ model: openai.responses(flavor.model), prompt: 'I am Ada.' });
    script(() => ({ text: 'You are Ada.' }));
    const second = await generateText({ model: openai.responses(flavor.model), prompt: 'Who am I?', providerOptions: { openai: { previousResponseId: first.providerMetadata!.openai!.responseId as string } } });
    expect(second.text).toBe('You are Ada.');
    expect(sent.at(-1).previous_response_id).toBe(first.providerMetadata!.openai!.responseId);
    expect(flavor.seen(upstream.requests.at(-1)!).map((seen) => ('text' in seen ? seen.text : seen.kind))).toEqual(['I am Ada.', 'Hi Ada.', 'Who am I?']);
  });

  it('openai.tools.mcp without approval: the gateway lists and calls the server; the SDK accepts its items', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_m', name: 'calc__add', args: { a: 2, b: 3 } }] } : { text: `The sum is ${results[0]}.` }));
    const result = await generateText({
      model: openai.responses(flavor.model),
      prompt: 'Add 2 and 3.',
      tools: { calc: mcpTool(openai, { serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' }) },
    });
    expect(result.text).toBe('The sum is 5.');
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 2, b: 3 } });
    // The SDK parsed the gateway's mcp items as provider-executed tool parts.
    expect(result.content).toContainEqual(expect.objectContaining({ type: 'tool-result', providerExecuted: true }));
    expect(sent.at(-1).tools).toEqual([expect.objectContaining({ type: 'mcp', server_label: 'calc', require_approval: 'never' })]);
    const last = upstream.requests.at(-1)!;
    expect(offeredTools(flavor, last)).toContain('calc__add');
    expect(mcpRoundTrip(last, flavor.seen)).toEqual({ args: { a: 2, b: 3 }, result: '5' });
  });

  it('openai.tools.mcp streamed: the SDK accepts the MCP items as they stream', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_s', name: 'calc__add', args: { a: 7, b: 8 } }] } : { text: `The sum is ${results[0]}.` }));
    const result = streamText({ model: openai.responses(flavor.model), prompt: 'Add 7 and 8.', tools: { calc: mcpTool(openai, { serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' }) } });
    let text = '';
    const toolResults: unknown[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error;
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'tool-result') toolResults.push(part.output);
    }
    expect(text).toBe('The sum is 15.');
    expect(toolResults).toHaveLength(1);
    expect(sent.at(-1).stream).toBe(true);
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 7, b: 8 } });
    expect(mcpRoundTrip(upstream.requests.at(-1)!, flavor.seen)).toEqual({ args: { a: 7, b: 8 }, result: '15' });
  });

  it("providerOptions.openai.allowedTools naming an MCP tool: the SDK's {type: 'mcp', server_label} entry limits the model to that server's tools (it was a 400)", async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_l', name: 'calc__add', args: { a: 1, b: 1 } }] } : { text: `It is ${results[0]}.` }));
    const before = upstream.requests.length;
    const result = await generateText({
      model: openai.responses(flavor.model),
      prompt: 'Add 1 and 1 with the calculator.',
      tools: {
        weather: tool({ description: 'Weather for a city.', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }),
        calc: mcpTool(openai, { serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'never' }),
      },
      providerOptions: { openai: { allowedTools: { toolNames: ['calc'], mode: 'required' } } },
    });
    expect(result.text).toBe('It is 2.');
    expect(sent.at(-1).tool_choice).toEqual({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'mcp', server_label: 'calc' }] });
    const first = upstream.requests[before]!;
    const choice = flavor.toolChoice(first);
    expect(choice?.mode).toBe('required');
    const allowed = choice?.names ?? offeredTools(flavor, first);
    expect(allowed.sort()).toEqual(['calc__add', 'calc__fail', 'calc__secret', 'calc__slow']);
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 1, b: 1 } });
  });

  it('providerOptions.openai.allowedTools naming the web search tool: allowed upstream where the upstream runs it, left out with the tool elsewhere (it was a 400)', async () => {
    script(() => ({ text: 'Nothing to search.' }));
    const before = upstream.requests.length;
    const result = await generateText({
      model: openai.responses(flavor.model),
      prompt: 'Is it sunny?',
      tools: {
        weather: tool({ description: 'Weather for a city.', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }),
        web_search: openai.tools.webSearch({}) as unknown as Tool,
      },
      providerOptions: { openai: { allowedTools: { toolNames: ['weather', 'web_search'] } } },
    });
    expect(result.text).toBe('Nothing to search.');
    expect(sent.at(-1).tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'weather' }, { type: 'web_search' }] });
    const body = upstream.requests[before]!.body;
    if (flavor.name === 'openai-responses') expect(body.tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'weather' }, { type: 'web_search' }] });
    else expect(flavor.toolChoice(upstream.requests[before]!)?.names ?? offeredTools(flavor, upstream.requests[before]!)).toEqual(['weather']);
  });

  it('openai.tools.mcp with approval: the SDK answers [user, item_reference(mcpr_…), mcp_approval_response] and the call runs', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_a', name: 'calc__add', args: { a: 40, b: 2 } }] } : { text: `The sum is ${results[0]}.` }));
    const calc = mcpTool(openai, { serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'always' });
    const first = await generateText({ model: openai.responses(flavor.model), prompt: 'Add 40 and 2.', tools: { calc } });
    const approval = first.content.find((part) => part.type === 'tool-approval-request');
    expect(approval).toBeDefined();
    const callsBefore = mcp.calls.length;
    const second = await generateText({
      model: openai.responses(flavor.model),
      tools: { calc },
      messages: [
        { role: 'user', content: 'Add 40 and 2.' },
        ...first.response.messages,
        // As the SDK's UI helpers build it for a provider-executed tool.
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: (approval as { approvalId: string }).approvalId, approved: true, providerExecuted: true }] },
      ],
    });
    expect(mcp.calls.length).toBe(callsBefore + 1);
    expect(mcp.calls.at(-1)).toEqual({ name: 'add', args: { a: 40, b: 2 } });
    expect(second.text).toBe('The sum is 42.');
    // The answer came statelessly, pointing at the stored approval request.
    const answer = sent.at(-1);
    expect(answer.previous_response_id).toBeUndefined();
    expect((answer.input as any[]).map((item) => item.type ?? item.role)).toEqual(['user', 'item_reference', 'mcp_approval_response']);
    expect(mcpRoundTrip(upstream.requests.at(-1)!, flavor.seen)).toEqual({ args: { a: 40, b: 2 }, result: '42' });
  });

  it('two approvals of one turn, each answered right after its request as the SDK sends them: both calls run', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_a', name: 'calc__add', args: { a: 40, b: 2 } }, { id: 'call_b', name: 'calc__add', args: { a: 3, b: 4 } }] } : { text: `Sums: ${[...results].sort().join(', ')}.` }));
    const calc = mcpTool(openai, { serverLabel: 'calc', serverUrl: mcpUrl, requireApproval: 'always' });
    const first = await generateText({ model: openai.responses(flavor.model), prompt: 'Add 40+2 and 3+4.', tools: { calc } });
    const approvals = first.content.filter((part) => part.type === 'tool-approval-request') as { approvalId: string }[];
    expect(approvals).toHaveLength(2);
    const callsBefore = mcp.calls.length;
    const second = await generateText({
      model: openai.responses(flavor.model),
      tools: { calc },
      messages: [
        { role: 'user', content: 'Add 40+2 and 3+4.' },
        ...first.response.messages,
        { role: 'tool', content: approvals.map(({ approvalId }) => ({ type: 'tool-approval-response' as const, approvalId, approved: true, providerExecuted: true })) },
      ],
    });
    expect((sent.at(-1).input as any[]).map((item) => item.type ?? item.role)).toEqual(['user', 'item_reference', 'mcp_approval_response', 'item_reference', 'mcp_approval_response']);
    expect(mcp.calls.slice(callsBefore).map((call) => call.args)).toEqual(expect.arrayContaining([{ a: 40, b: 2 }, { a: 3, b: 4 }]));
    expect(second.text).toBe('Sums: 42, 7.');
  });
});

/**
 * A model that reasons in the open (`reasoning_content`, as vLLM, DeepSeek and
 * Qwen servers send it): with `reasoningSummary` asked for, the AI SDK shows
 * the reasoning, which it reads only from summaries.
 */
describe('AI SDK reasoning from a Chat Completions upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const REASONING = 'The user asks 2+2. That is 4.';
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it.each([false, true])('reasoningSummary "auto": the reasoning reaches result.reasoningText (streamed: %s)', async (stream) => {
    upstream.setScript((request) =>
      request.body.stream
        ? { kind: 'sse', pieces: [fixture('vllm-reasoning-content.sse')] }
        : { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: '2 + 2 = 4.', reasoning_content: REASONING }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 9 } } },
    );
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key' });
    const options = { model: openai.responses('gpt-5'), prompt: 'What is 2+2?', providerOptions: { openai: { reasoningSummary: 'auto' } } };
    if (stream) {
      const result = streamText(options);
      const deltas: string[] = [];
      for await (const part of result.fullStream) if (part.type === 'reasoning-delta') deltas.push(part.text);
      expect(deltas.join('')).toBe(REASONING);
      expect(await result.reasoningText).toBe(REASONING);
    } else {
      expect((await generateText(options)).reasoningText).toBe(REASONING);
    }
  });
});
