import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { assertErrorEnvelope, assertValidEvent, assertValidEventWithMcpItems, assertValidItem, assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * A model that calls the tools named in `plan` (by the name it was offered),
 * once, then answers with every tool result it saw.
 */
function modelCalling(plan: { name: string; args: Record<string, unknown> }[]): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const messages = request.body.messages as any[];
    const results = messages.filter((message) => message.role === 'tool').map((message) => message.content);
    const stream = request.body.stream === true;
    if (results.length === 0) {
      const calls = plan.map((call, index) => ({ id: `call_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
      return stream
        ? { kind: 'sse', pieces: sse([...calls.map((call, index) => chunk({ tool_calls: [{ index, ...call }] })), chunk({}, 'tool_calls'), usageChunk(10, 5)]) }
        : { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5 } } };
    }
    const answer = `Results: ${results.join(' | ')}`;
    return stream
      ? { kind: 'sse', pieces: sse([chunk({ content: answer }), chunk({}, 'stop')]) }
      : { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] } };
  };
}

/** Schema-validates a response, except OpenAI's MCP items, which the OpenResponses schema does not define. */
function assertValidExceptMcp(response: any): void {
  assertValidResponse({ ...response, output: response.output.filter((item: any) => !item.type.startsWith('mcp_')) });
  for (const item of response.output) if (!item.type.startsWith('mcp_')) assertValidItem(item);
}

describe('MCP: operator-configured servers, their calls shown as function calls (mcp.callItems: "function")', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const legacy = new McpTestServer('sse');
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl, legacyUrl] = await Promise.all([upstream.start(), mcp.start(), legacy.start()]);
    gateway = await startGateway(upstreamUrl, {
      mcp: {
        servers: [
          { name: 'tools', url: mcpUrl, headers: { 'x-api-key': 'operator-secret' }, allowed_tools: ['add', 'slow', 'fail'] },
          { name: 'old', url: legacyUrl },
        ],
        listTtlMs: 60_000,
        callItems: 'function',
      },
    });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key-never-forwarded', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close(), legacy.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('offers the servers\' tools as <server>__<tool> and runs them through the loop as function calls', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 2, b: 3 } }]));
    const response = await client.responses.create({ model: 'm', input: 'What is 2 + 3?' });
    assertValidResponse(response);
    expect(response.output.map((item) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(response.output[1]).toMatchObject({ type: 'function_call_output', call_id: 'call_0', output: '5' });
    expect(response.output_text).toBe('Results: 5');
    const offered = upstream.requests[0]!.body.tools.map((tool: any) => tool.function.name).sort();
    expect(offered).toEqual(['old__add', 'old__fail', 'old__secret', 'old__slow', 'tools__add', 'tools__fail', 'tools__slow']);
    expect(upstream.requests[0]!.body.tools.find((tool: any) => tool.function.name === 'tools__add').function).toMatchObject({ description: 'Adds two numbers.', parameters: { type: 'object' } });
  });

  it('an upstream that refuses a tool the gateway offered (an operator MCP tool\'s schema) is a 502 naming it and its server; a refusal of the client\'s own tool stays the client\'s 400', async () => {
    // As OpenAI refuses a schema it cannot take: by the tool's place in the request.
    const refusing = (name: string) => (request: RecordedRequest): UpstreamReply => {
      const index = (request.body.tools as any[]).findIndex((tool) => tool.function.name === name);
      return { kind: 'json', status: 400, body: { error: { message: `Invalid schema for function '${name}': In context=('properties', 'list'), array schema missing items.`, type: 'invalid_request_error', param: `tools[${index}].function.parameters`, code: 'invalid_function_parameters' } } };
    };
    upstream.setScript(refusing('tools__add'));
    const refused = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'mine', parameters: { type: 'object', properties: {} } }] }) });
    expect(refused.status).toBe(502);
    const body = await refused.json();
    assertErrorEnvelope(body);
    expect(body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_refused_tool', param: null });
    expect(body.error.message).toContain("'tools__add' from the operator's MCP server 'tools'");
    upstream.setScript(refusing('mine'));
    const own = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'mine', parameters: { type: 'object', properties: {} } }] }) });
    expect(own.status).toBe(400);
    expect(((await own.json()) as any).error).toMatchObject({ code: 'invalid_function_parameters', param: 'tools[0].function.parameters' });
  });

  it('sends the configured headers and never the client\'s Authorization', async () => {
    const seen = mcp.headers.filter((headers) => headers['x-api-key']);
    expect(seen.length).toBeGreaterThan(0);
    expect(mcp.headers.every((headers) => !String(headers.authorization ?? '').includes('client-key-never-forwarded'))).toBe(true);
    expect(mcp.headers.every((headers) => headers['x-api-key'] === 'operator-secret')).toBe(true);
  });

  it('a server on the older HTTP+SSE transport works through the fallback', async () => {
    upstream.setScript(modelCalling([{ name: 'old__add', args: { a: 40, b: 2 } }]));
    const response = await client.responses.create({ model: 'm', input: 'x' });
    expect(response.output_text).toBe('Results: 42');
    expect(legacy.methods).toContain('tools/call');
  });

  it('two slow tools of one turn run concurrently, and the stream is accepted by responses.stream()', async () => {
    upstream.setScript(modelCalling([
      { name: 'tools__slow', args: { ms: 400, label: 'one' } },
      { name: 'tools__slow', args: { ms: 400, label: 'two' } },
    ]));
    mcp.maxRunning = 0;
    const started = performance.now();
    const stream = client.responses.stream({ model: 'm', input: 'x' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    // One after another they would take 800 ms.
    expect(performance.now() - started).toBeLessThan(780);
    expect(mcp.maxRunning).toBe(2);
    for (const event of events) assertValidEvent(event);
    expect(final.output_text).toBe('Results: slept 400 ms (one) | slept 400 ms (two)');
  });

  it('an MCP isError result is an error output the model sees', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__fail', args: {} }]));
    const response = await client.responses.create({ model: 'm', input: 'x' });
    expect(response.output[1]).toMatchObject({ type: 'function_call_output', output: 'the thing is broken' });
    expect(response.status).toBe('completed');
  });

  it('tools/list is cached across requests, shared by concurrent ones, and refreshed on tools/list_changed', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 1, b: 1 } }]));
    await client.responses.create({ model: 'm', input: 'warm the cache' });
    const before = mcp.listCalls;
    await Promise.all([client.responses.create({ model: 'm', input: 'a' }), client.responses.create({ model: 'm', input: 'b' }), client.responses.create({ model: 'm', input: 'c' })]);
    expect(mcp.listCalls).toBe(before);
    mcp.addTool('brand_new');
    await new Promise((resolve) => setTimeout(resolve, 100));
    upstream.requests.length = 0;
    await client.responses.create({ model: 'm', input: 'd' });
    expect(mcp.listCalls).toBe(before + 1);
    // brand_new is not in this server's allowed_tools, so it is listed but not offered.
    expect(upstream.requests[0]!.body.tools.map((tool: any) => tool.function.name)).not.toContain('tools__brand_new');
  });

  it('a client that disconnects cancels the MCP call on the server (notifications/cancelled)', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__slow', args: { ms: 5_000, label: 'cancel-me' } }]));
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream: true }), signal: controller.signal });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('"function_call_output"')) seen += new TextDecoder().decode((await reader.read()).value);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const abortedAt = performance.now();
    while (!mcp.cancelledCalls.includes('cancel-me') && performance.now() - abortedAt < 1_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(mcp.cancelledCalls).toContain('cancel-me');
    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(mcp.methods).toContain('notifications/cancelled');
  });
});

/**
 * The default: operator servers' calls are OpenAI's `mcp_call` items, as
 * OpenAI shows MCP calls it ran itself. Clients that run every function_call
 * they see (the Agents SDK, the AI SDK, LangChain, Codex) would otherwise take
 * the gateway's calls for their own.
 */
describe('MCP: operator-configured servers, their calls shown as mcp_call items (the default)', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  const clientTool = { type: 'function' as const, name: 'ask_user', parameters: { type: 'object', properties: {} }, strict: false };
  /** What the model was shown as tool results in the last call. */
  const results = () => (upstream.requests.at(-1)!.body.messages as any[]).filter((message) => message.role === 'tool').map((message) => message.content).sort();

  let upstreamEndpoint: string;
  let mcpEndpoint: string;

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    [upstreamEndpoint, mcpEndpoint] = [upstreamUrl, mcpUrl];
    gateway = await startGateway(upstreamUrl, { mcp: { servers: [{ name: 'tools', url: mcpUrl }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('a call runs in the loop and shows as one mcp_call (server_label the server, output the result); no listing item', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 2, b: 3 } }]));
    const response = await client.responses.create({ model: 'm', input: 'What is 2 + 3?' });
    assertValidResponseWithMcpItems(response);
    expect(response.output.map((item) => item.type)).toEqual(['mcp_call', 'message']);
    expect(response.output[0]).toMatchObject({ type: 'mcp_call', server_label: 'tools', name: 'add', arguments: '{"a":2,"b":3}', output: '5', status: 'completed' });
    expect(response.output[0]).not.toHaveProperty('error');
    expect(response.output_text).toBe('Results: 5');
    expect(results()).toEqual(['5']);
  });

  it('an isError result is the mcp_call\'s error, which the model sees', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__fail', args: {} }]));
    const response = await client.responses.create({ model: 'm', input: 'x' });
    expect(response.output[0]).toMatchObject({ type: 'mcp_call', error: 'the thing is broken' });
    expect(response.output[0]).not.toHaveProperty('output');
    expect(results()).toEqual([JSON.stringify({ error: 'the thing is broken' })]);
  });

  it('a call cut off (out of time) is an incomplete mcp_call with its error: it did not finish, whether it took effect is unknown', async () => {
    const timed = await startGateway(upstreamEndpoint, { mcp: { servers: [{ name: 'tools', url: mcpEndpoint, timeoutMs: 200 }] } });
    try {
      upstream.setScript(modelCalling([{ name: 'tools__slow', args: { ms: 2_000, label: 'late' } }]));
      const response = await new OpenAI({ baseURL: timed.baseURL, apiKey: 'k', maxRetries: 0 }).responses.create({ model: 'm', input: 'x' });
      assertValidResponseWithMcpItems(response);
      expect(response.status).toBe('completed');
      expect(response.output[0]).toMatchObject({ type: 'mcp_call', status: 'incomplete', error: "The tool 'tools__slow' did not finish within 200 ms." });
    } finally {
      await timed.close();
    }
  });

  it('streamed: every event valid, and responses.stream() accepts it', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 1, b: 1 } }]));
    const stream = client.responses.stream({ model: 'm', input: 'x' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    assertEventStreamInvariants(events, assertValidEventWithMcpItems);
    const final = await stream.finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(['mcp_call', 'message']);
    expect(events.filter((event) => event.type === 'response.output_item.added').map((event) => [event.item.type, event.item.status ?? null])).toContainEqual(['mcp_call', 'in_progress']);
  });

  it('a turn that also calls a client tool: the operator call runs before the pause, and the continuation shows the model both results', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 20, b: 22 } }, { name: 'ask_user', args: {} }]));
    const paused = await client.responses.create({ model: 'm', input: 'x', tools: [clientTool] });
    expect(paused.status).toBe('requires_action');
    expect(paused.output.map((item) => item.type)).toEqual(['function_call', 'mcp_call']);
    expect(paused.output[1]).toMatchObject({ name: 'add', output: '42' });
    const calls = mcp.calls.length;
    const call = paused.output[0] as OpenAI.Responses.ResponseFunctionToolCall;

    const resumed = await client.responses.create({ model: 'm', previous_response_id: paused.id, tools: [clientTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: 'yes' }] });
    expect(resumed.output_text).toBe('Results: 42 | yes');
    // Statelessly, resending the items as they came, it is the same, and nothing runs twice.
    const resent = await client.responses.create({ model: 'm', store: false, tools: [clientTool], input: [{ role: 'user', content: 'x' }, ...paused.output, { type: 'function_call_output', call_id: call.call_id, output: 'yes' }] as any });
    expect(resent.output_text).toBe('Results: 42 | yes');
    expect(mcp.calls.length).toBe(calls);
  });

  it('a continuation shows the model the earlier mcp_call as the call it made and the result it saw', async () => {
    upstream.setScript(modelCalling([{ name: 'tools__add', args: { a: 4, b: 4 } }]));
    const first = await client.responses.create({ model: 'm', input: 'x' });
    upstream.setScript(() => ({ kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] } }));
    await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'again' });
    const messages = upstream.requests.at(-1)!.body.messages as any[];
    const assistant = messages.find((message) => message.tool_calls);
    expect(assistant.tool_calls[0].function).toEqual({ name: 'tools__add', arguments: '{"a":4,"b":4}' });
    expect(messages.find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: assistant.tool_calls[0].id, content: '8' });
  });
});

describe('MCP: servers named in the request', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let mcpUrl: string;
  let gateway: RunningGateway;
  let client: OpenAI;
  const tool = (extra: Record<string, unknown> = {}) => ({ type: 'mcp' as const, server_label: 'calc', server_url: mcpUrl, headers: { authorization: 'Bearer mcp-own-token' }, ...extra });

  beforeAll(async () => {
    const [upstreamUrl, url] = await Promise.all([upstream.start(), mcp.start()]);
    mcpUrl = url;
    // Loopback is refused for request-supplied URLs unless allowed: this test server is.
    gateway = await startGateway(upstreamUrl, { mcp: { allowedUrls: [new URL(url).origin + '/'] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  afterEach(() => {
    upstream.requests.length = 0;
  });

  it('lists the tools once, calls them as mcp_call items, and the SDK accepts create and stream', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 2, b: 5 } }]));
    const response: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool({ require_approval: 'never', allowed_tools: ['add', 'slow'] })] as any });
    assertValidExceptMcp(response);
    expect(response.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(response.output[0]).toMatchObject({ server_label: 'calc', tools: expect.arrayContaining([expect.objectContaining({ name: 'add', input_schema: expect.any(Object) })]) });
    expect(response.output[1]).toMatchObject({ type: 'mcp_call', server_label: 'calc', name: 'add', arguments: '{"a":2,"b":5}', output: '7' });
    // Optional fields are absent, not null (the AI SDK's strict schema rejects null there).
    expect(response.output[1]).not.toHaveProperty('error');
    expect(response.output[0].tools.every((tool: any) => tool.annotations !== null && tool.description !== null)).toBe(true);
    expect(response.output[0]).not.toHaveProperty('error');
    expect(response.output_text).toBe('Results: 7');
    expect(upstream.requests[0]!.body.tools.map((entry: any) => entry.function.name).sort()).toEqual(['calc__add', 'calc__slow']);
    expect(response.tools).toEqual([]);
    // The request's own headers for the server were sent; the client's key was not.
    expect(mcp.headers.some((headers) => headers.authorization === 'Bearer mcp-own-token')).toBe(true);
    expect(mcp.headers.every((headers) => headers.authorization !== 'Bearer client-key')).toBe(true);

    const stream = client.responses.stream({ model: 'm', input: 'x', tools: [tool({ require_approval: 'never' })] as any });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final: any = await stream.finalResponse();
    expect(final.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(new Set(events.map((event) => event.type))).toEqual(new Set(['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.completed']));
  });

  it("server_description is context the model reads: it comes before each of the server's tools' own description", async () => {
    upstream.setScript(() => textCompletion('ok'));
    await client.responses.create({ model: 'm', input: 'x', tools: [tool({ require_approval: 'never', allowed_tools: ['add'], server_description: 'A calculator for the accounts team.' })] as any });
    const add = upstream.requests.at(-1)!.body.tools.find((entry: any) => entry.function.name === 'calc__add');
    expect(add.function.description).toBe('A calculator for the accounts team.\n\nAdds two numbers.');
  });

  it('approval: a call that needs it pauses; approve runs it, and the listing is reused from history', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 1, b: 2 } }]));
    const first: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool()] as any });
    expect(first.status).toBe('requires_action');
    expect(first.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    const request = first.output[1];
    expect(request).toMatchObject({ server_label: 'calc', name: 'add', arguments: '{"a":1,"b":2}' });
    const callsBefore = mcp.calls.length;
    const listsBefore = mcp.listCalls;

    const second: any = await client.responses.create({
      model: 'm',
      previous_response_id: first.id,
      tools: [tool()] as any,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] as any,
    });
    assertValidExceptMcp(second);
    expect(second.output.map((item: any) => item.type)).toEqual(['mcp_call', 'message']);
    expect(second.output[0]).toMatchObject({ approval_request_id: request.id, output: '3' });
    expect(second.output[0]).not.toHaveProperty('error');
    expect(mcp.calls.length).toBe(callsBefore + 1);
    expect(mcp.listCalls).toBe(listsBefore);
    expect(second.output_text).toBe('Results: 3');

    // Replaying the same approval is a 400.
    const replay = await client.responses
      .create({ model: 'm', previous_response_id: second.id, tools: [tool()] as any, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] as any })
      .catch((caught) => caught);
    expect(replay).toBeInstanceOf(OpenAI.BadRequestError);
    expect(replay.param).toBe('input[0].approval_request_id');
  });

  it('approval: approving a call whose server the follow-up no longer names is a 400 that says to name it again; nothing runs', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 4, b: 4 } }]));
    const first: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool()] as any });
    const callsBefore = mcp.calls.length;
    const upstreamBefore = upstream.requests.length;
    const caught = await client.responses
      .create({ model: 'm', previous_response_id: first.id, input: [{ type: 'mcp_approval_response', approval_request_id: first.output[1].id, approve: true }] as any })
      .catch((error) => error);
    expect(caught).toBeInstanceOf(OpenAI.BadRequestError);
    expect(caught.code).toBe('mcp_server_not_named');
    expect(caught.param).toBe('input[0]');
    expect(caught.message).toMatch(/'calc'/);
    expect(caught.message).not.toMatch(/calc__add/);
    expect(mcp.calls.length).toBe(callsBefore);
    expect(upstream.requests.length).toBe(upstreamBefore);
  });

  it('approval: deny feeds the refusal and its reason back to the model; an unknown request id is a 400', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 1, b: 2 } }]));
    const first: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool()] as any });
    const callsBefore = mcp.calls.length;
    const denied: any = await client.responses.create({
      model: 'm',
      previous_response_id: first.id,
      tools: [tool()] as any,
      input: [{ type: 'mcp_approval_response', approval_request_id: first.output[1].id, approve: false, reason: 'too expensive' }] as any,
    });
    expect(mcp.calls.length).toBe(callsBefore);
    expect(denied.output[0]).toMatchObject({ type: 'mcp_call', error: 'The user did not approve this call: too expensive' });
    expect(denied.output[0]).not.toHaveProperty('output');
    expect(upstream.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'tool', content: '{"error":"The user did not approve this call: too expensive"}' });

    const unknown = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', previous_response_id: first.id, tools: [tool()], input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }] }),
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error.param).toBe('input[0].approval_request_id');
  });

  it('approval: a deny needs no server named again; the refusal is still an mcp_call, which the model sees as its call and error', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 6, b: 1 } }]));
    const first: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool()] as any });
    const callsBefore = mcp.calls.length;
    const denied: any = await client.responses.create({ model: 'm', previous_response_id: first.id, input: [{ type: 'mcp_approval_response', approval_request_id: first.output[1].id, approve: false }] as any });
    assertValidExceptMcp(denied);
    expect(denied.output[0]).toMatchObject({ type: 'mcp_call', server_label: 'calc', name: 'add', error: 'The user did not approve this call.', approval_request_id: first.output[1].id });
    expect(mcp.calls.length).toBe(callsBefore);
    const messages = upstream.requests.at(-1)!.body.messages as any[];
    const call = messages.at(-2).tool_calls[0];
    expect(call.function.name).toBe('calc__add');
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.id, content: '{"error":"The user did not approve this call."}' });
  });

  it('approval in a turn that also ran a call needing none: the continuation shows the model its calls as the one turn it made, then their results', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 2, b: 3 } }, { name: 'calc__slow', args: { ms: 1, label: 'approved' } }]));
    const approval = { never: { tool_names: ['add'] } };
    const first: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool({ require_approval: approval })] as any });
    expect(first.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'mcp_approval_request']);
    const request = first.output[2];
    const check = async (body: Record<string, unknown>) => {
      const second: any = await client.responses.create({ model: 'm', tools: [tool({ require_approval: approval })] as any, ...body });
      assertValidExceptMcp(second);
      expect(second.output_text).toBe('Results: 5 | slept 1 ms (approved)');
      const messages = upstream.requests.at(-1)!.body.messages as any[];
      // One assistant message holding both calls, then both results: not two turns of one call each.
      const assistants = messages.filter((message) => message.role === 'assistant');
      expect(assistants).toHaveLength(1);
      expect(assistants[0].tool_calls.map((call: any) => call.function.name)).toEqual(['calc__add', 'calc__slow']);
      const at = messages.indexOf(assistants[0]);
      expect(messages.slice(at + 1).map((message) => [message.role, message.content])).toEqual([
        ['tool', '5'],
        ['tool', 'slept 1 ms (approved)'],
      ]);
    };
    const answer = { type: 'mcp_approval_response', approval_request_id: request.id, approve: true };
    await check({ previous_response_id: first.id, input: [answer] });
    // Statelessly, the Agents SDK's way: the turn's items resent with the answer (approvals here are answered once: a new pause).
    const again: any = await client.responses.create({ model: 'm', input: 'x', store: false, tools: [tool({ require_approval: approval })] as any });
    await check({ store: false, input: [{ role: 'user', content: 'x' }, ...again.output, { ...answer, approval_request_id: again.output[2].id }] });
  });

  it('require_approval {never: {tool_names}} runs the named tools without asking', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 4, b: 4 } }]));
    const response: any = await client.responses.create({ model: 'm', input: 'x', tools: [tool({ require_approval: { never: { tool_names: ['add'] } } })] as any });
    expect(response.status).toBe('completed');
    expect(response.output[1]).toMatchObject({ type: 'mcp_call', output: '8' });
  });
});

describe('MCP egress policy for request-supplied server URLs', () => {
  let counter: Server;
  let port: number;
  let connections = 0;
  let redirector: import('node:http').Server;
  let redirectorPort: number;
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;

  beforeAll(async () => {
    counter = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, '::', resolve));
    port = (counter.address() as AddressInfo).port;
    const http = await import('node:http');
    redirector = http.createServer((_req, res) => res.writeHead(307, { location: `http://127.0.0.1:${port}/mcp` }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorPort = (redirector.address() as AddressInfo).port;
    // Only the redirector is allowed: where it points to is not.
    gateway = await startGateway(await upstream.start(), { mcp: { allowedUrls: [`http://127.0.0.1:${redirectorPort}/`] } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    counter.close();
    redirector.close();
  });

  const refused = () => [
    `http://127.0.0.1:${port}/mcp`,
    `http://127.1:${port}/mcp`,
    `http://127.0.1:${port}/mcp`,
    `http://2130706433:${port}/mcp`,
    `http://0x7f000001:${port}/mcp`,
    `http://0x7f.0.0.1:${port}/mcp`,
    `http://0177.0.0.1:${port}/mcp`,
    `http://017700000001:${port}/mcp`,
    `http://[::1]:${port}/mcp`,
    `http://[::ffff:127.0.0.1]:${port}/mcp`,
    `http://[::ffff:7f00:1]:${port}/mcp`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/mcp`,
    `http://[::127.0.0.1]:${port}/mcp`,
    `http://localhost:${port}/mcp`,
    `http://LOCALHOST:${port}/mcp`,
    `http://localhost.:${port}/mcp`,
    `http://api.localhost:${port}/mcp`,
    `http://0.0.0.0:${port}/mcp`,
    `http://0:${port}/mcp`,
    `http://[::]:${port}/mcp`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://10.0.0.1/mcp',
    'http://172.16.5.4/mcp',
    'http://192.168.1.1/mcp',
    'http://100.64.0.1/mcp',
    'http://[fc00::1]/mcp',
    'http://[fe80::1]/mcp',
    'http://224.0.0.1/mcp',
    'http://255.255.255.255/mcp',
    'http://[ff02::1]/mcp',
    'http://[64:ff9b::7f00:1]/mcp',
    'ftp://example.com/mcp',
    'file:///etc/passwd',
    'http://user:pass@example.com/mcp',
    'not a url',
  ];

  it('refuses every address and URL trick with a 400 naming the tool, without opening a connection', async () => {
    const urls = refused();
    expect(urls.length).toBeGreaterThanOrEqual(30);
    for (const url of urls) {
      const response = await fetch(`${gateway.baseURL}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'mcp', server_label: 'evil', server_url: url }] }),
      });
      const body: any = await response.json();
      expect(response.status, url).toBe(400);
      expect(body.error.param, url).toBe('tools[1].server_url');
      expect(body.error.code, url).toBe('mcp_server_url_refused');
    }
    expect(connections).toBe(0);
    expect(upstream.requests).toHaveLength(0);
  });

  it('a redirect to loopback from an allowed server is refused, still without a connection to the target', async () => {
    const response = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'x', tools: [{ type: 'mcp', server_label: 'hop', server_url: `http://127.0.0.1:${redirectorPort}/mcp` }] }),
    });
    const body: any = await response.json();
    expect(response.status).toBe(400);
    expect(body.error.param).toBe('tools[0].server_url');
    // Said in the policy's words, not the fetch's ("fetch failed").
    expect(body.error.message).toMatch(/127\.0\.0\.1 is an address the egress policy refuses/);
    expect(connections).toBe(0);
  });
});
