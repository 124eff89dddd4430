import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertErrorEnvelope, assertValidCompaction, assertValidResponse } from '../support/openresponses-schema.ts';
import { OtlpReceiver, SPAN_KIND, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { flavors, scriptModel, type FlavorName, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { finalOf, SocketClient } from '../support/socket-client.ts';
import { waitFor } from '../support/wait-for.ts';

/** A client's own trace: the span its call to the gateway belongs to. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** `traceparent` → its trace id and span id (W3C: version-traceid-spanid-flags). */
function parseTraceparent(value: unknown): { traceId: string; spanId: string; flags: string } {
  expect(value).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const [, traceId, spanId, flags] = String(value).split('-');
  return { traceId: traceId!, spanId: spanId!, flags: flags! };
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const onlyOne = (spans: ReceivedSpan[], name: string) => {
  const found = byName(spans, name);
  expect(found, `spans named ${name}: ${spans.map((span) => span.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
};

/** A model that calls `tools__add` once, then answers with what it got back. */
function scriptTwoTurnLoop(upstream: ScriptedChatUpstream, flavor: ProviderFlavor, tool = 'tools__add'): void {
  scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_add', name: tool, args: { a: 2, b: 3 } }] } : { text: `The sum is ${results[0]}.` }));
}

/** `gen_ai.provider.name` per API, as the semantic conventions name them. */
const GEN_AI_PROVIDER: Record<FlavorName, string> = { 'openai-chat': 'openai', anthropic: 'anthropic', 'openai-responses': 'openai', gemini: 'gcp.gemini' };

describe.each(flavors)('traces over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const receiver = new OtlpReceiver();
  let upstreamUrl: string;
  let mcpUrl: string;
  let tracesUrl: string;
  let gateway: RunningGateway | null = null;

  /** A gateway whose operator MCP server is the test server, exporting to the receiver unless `tracing` says otherwise. */
  async function start(tracing: Record<string, unknown> = {}): Promise<OpenAI> {
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add', 'fail'] }] }, tracing: { endpoint: tracesUrl, ...tracing } });
    return new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  }
  /** Closing the gateway exports what is queued. */
  async function stop(): Promise<void> {
    await gateway?.close();
    gateway = null;
  }

  beforeAll(async () => {
    [upstreamUrl, mcpUrl, tracesUrl] = await Promise.all([upstream.start(), mcp.start(), receiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([upstream.close(), mcp.close(), receiver.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    receiver.spans.length = 0;
    receiver.requests.length = 0;
    mcp.callMeta.length = 0;
  });
  afterEach(stop);

  it.each([false, true])('a two-turn tool loop (stream: %s) is one response span with two model calls and a tool call, under the client\'s trace', async (stream) => {
    scriptTwoTurnLoop(upstream, flavor);
    const client = await start();
    const caller = clientTrace();
    const options = { headers: { traceparent: caller.traceparent, tracestate: 'vendor=opaque' } };
    let response: any;
    if (stream) {
      const events: any[] = [];
      for await (const event of await client.responses.create({ model: flavor.model, input: 'What is 2 + 3?', stream: true }, options)) events.push(event);
      response = assertEventStreamInvariants(events);
    } else {
      response = await client.responses.create({ model: flavor.model, input: 'What is 2 + 3?' }, options);
      assertValidResponse(response);
    }
    expect(response.status).toBe('completed');
    expect(response.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(response.output[2].content[0].text).toBe('The sum is 5.');
    await stop();

    const spans = await receiver.waitForSpans(4);
    expect(spans).toHaveLength(4);
    // OTLP's default encoding.
    expect(receiver.requests.map((request) => request.contentType)).toEqual(receiver.requests.map(() => 'application/x-protobuf'));
    const root = onlyOne(spans, 'invoke_agent');
    const calls = byName(spans, `chat ${flavor.model}`).sort((a, b) => Number(a.attributes['loopgate.turn']) - Number(b.attributes['loopgate.turn']));
    const tool = onlyOne(spans, 'execute_tool tools__add');
    expect(calls).toHaveLength(2);

    // One trace, the client's: the response span is its child, every other span the response's.
    for (const span of spans) expect(span.traceId).toBe(caller.traceId);
    expect(root.parentSpanId).toBe(caller.spanId);
    for (const child of [...calls, tool]) expect(child.parentSpanId).toBe(root.spanId);
    expect(root.resource['service.name']).toBe('loopgate');

    expect(root.kind).toBe(SPAN_KIND.server);
    expect(root.status.code).toBe(0);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': GEN_AI_PROVIDER[flavor.name],
      'gen_ai.request.model': flavor.model,
      'gen_ai.response.id': response.id,
      'gen_ai.request.stream': stream,
      'gen_ai.usage.input_tokens': response.usage.input_tokens,
      'gen_ai.usage.output_tokens': response.usage.output_tokens,
      'loopgate.response.status': 'completed',
      'loopgate.tenant': 'default',
    });
    expect(response.usage.input_tokens).toBe(20);

    for (const [index, call] of calls.entries()) {
      expect(call.kind).toBe(SPAN_KIND.client);
      expect(call.status.code).toBe(0);
      expect(call.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': GEN_AI_PROVIDER[flavor.name],
        'gen_ai.request.model': flavor.model,
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.finish_reasons': [index === 0 ? flavor.finish.tools : flavor.finish.done],
        'gen_ai.response.model': flavor.answer.model,
        'server.address': '127.0.0.1',
        'loopgate.turn': index + 1,
      });
      expect(call.attributes['gen_ai.response.id']).toMatch(flavor.answer.id);
    }
    expect(tool.kind).toBe(SPAN_KIND.internal);
    expect(tool.status.code).toBe(0);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'tools__add',
      'gen_ai.tool.call.id': 'call_add',
      'mcp.method.name': 'tools/call',
      'loopgate.tool.executor': 'mcp',
    });
    // The loop's order: model, tool, model — each inside the response.
    expect(calls[0]!.endNanos <= tool.startNanos && tool.endNanos <= calls[1]!.startNanos).toBe(true);
    for (const child of [...calls, tool]) expect(child.startNanos >= root.startNanos && child.endNanos <= root.endNanos).toBe(true);

    // Each upstream call continued the trace from its own model-call span; the MCP server got the tool call's.
    const modelCalls = upstream.requests.filter((request) => request.method === 'POST');
    expect(modelCalls).toHaveLength(2);
    for (const [index, request] of modelCalls.entries()) {
      const sent = parseTraceparent(request.headers.traceparent);
      expect(sent).toEqual({ traceId: caller.traceId, spanId: calls[index]!.spanId, flags: '01' });
      expect(request.headers.tracestate).toBe('vendor=opaque');
    }
    expect(mcp.callMeta).toHaveLength(1);
    const meta = mcp.callMeta[0]!.meta!;
    expect(parseTraceparent(meta.traceparent)).toEqual({ traceId: caller.traceId, spanId: tool.spanId, flags: '01' });
    expect(meta.tracestate).toBe('vendor=opaque');

    // Prompts, answers and tool data stay out unless the operator asks for them.
    for (const span of spans) expect(Object.keys(span.attributes).filter((key) => /messages|instructions|definitions|call\.arguments|call\.result/.test(key))).toEqual([]);
  });

  it('with captureContent, spans carry the prompt, the answers, the tool definitions, arguments and result (exported as OTLP JSON)', async () => {
    scriptTwoTurnLoop(upstream, flavor);
    const client = await start({ captureContent: true, protocol: 'http/json' });
    const response = await client.responses.create({ model: flavor.model, instructions: 'Answer briefly.', input: 'What is 2 + 3?' });
    assertValidResponse(response);
    await stop();

    const spans = await receiver.waitForSpans(4);
    const calls = byName(spans, `chat ${flavor.model}`).sort((a, b) => Number(a.attributes['loopgate.turn']) - Number(b.attributes['loopgate.turn']));
    const tool = onlyOne(spans, 'execute_tool tools__add');
    expect(JSON.parse(String(calls[0]!.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'Answer briefly.' }]);
    expect(JSON.parse(String(calls[0]!.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'What is 2 + 3?' }] }]);
    expect(JSON.parse(String(calls[0]!.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'tool_call', id: 'call_add', name: 'tools__add', arguments: { a: 2, b: 3 } }], finish_reason: 'tool_call' }]);
    expect(JSON.parse(String(calls[0]!.attributes['gen_ai.tool.definitions'])).map((tool: any) => tool.name).sort()).toEqual(['tools__add', 'tools__fail']);
    expect(JSON.parse(String(calls[1]!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is 2 + 3?' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_add', name: 'tools__add', arguments: { a: 2, b: 3 } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_add', response: '5' }] },
    ]);
    expect(JSON.parse(String(calls[1]!.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'The sum is 5.' }], finish_reason: 'stop' }]);
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({ a: 2, b: 3 });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('5');
    expect(receiver.requests.map((request) => request.contentType)).toEqual(receiver.requests.map(() => 'application/json'));
  });

  it("a compaction_trigger response's model call says which answer and model the upstream gave, as any model call does", async () => {
    scriptModel(upstream, flavor, () => ({ text: 'The user said hello.' }));
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), compaction: { key: Buffer.alloc(32, 'trace').toString('base64') }, tracing: { endpoint: tracesUrl } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({ model: flavor.model, input: [{ role: 'user', content: 'hello' }, { type: 'compaction_trigger' } as never] });
    assertValidResponse(response);
    expect(response.output.at(-1)).toMatchObject({ type: 'compaction' });
    await stop();
    const call = onlyOne(await receiver.waitForSpans(2), `chat ${flavor.model}`);
    expect(call.attributes['gen_ai.response.model']).toBe(flavor.answer.model);
    expect(call.attributes['gen_ai.response.id']).toMatch(flavor.answer.id);
  });

  it('POST /v1/responses/compact traces its summarising call: a chat span under the client\'s trace, whose context goes upstream', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'The user said hello.' }));
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), compaction: { key: Buffer.alloc(32, 'trace').toString('base64') }, tracing: { endpoint: tracesUrl } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const caller = clientTrace();
    const compacted = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'hello' }] }, { headers: { traceparent: caller.traceparent } });
    assertValidCompaction(compacted);
    expect(compacted.output.at(-1)).toMatchObject({ type: 'compaction' });
    await stop();
    const call = onlyOne(await receiver.waitForSpans(1), `chat ${flavor.model}`);
    expect(call).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId, kind: SPAN_KIND.client });
    expect(call.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': GEN_AI_PROVIDER[flavor.name], 'gen_ai.response.model': flavor.answer.model, 'gen_ai.usage.input_tokens': compacted.usage.input_tokens });
    expect(parseTraceparent(upstream.requests.at(-1)!.headers.traceparent)).toEqual({ traceId: caller.traceId, spanId: call.spanId, flags: '01' });
  });

  it('a failed tool call is an error span; the response goes on and its span is not one; what the tool said is content, withheld without captureContent', async () => {
    scriptTwoTurnLoop(upstream, flavor, 'tools__fail');
    const client = await start();
    const response = await client.responses.create({ model: flavor.model, input: 'Break it.' });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    await stop();

    const spans = await receiver.waitForSpans(4);
    const tool = onlyOne(spans, 'execute_tool tools__fail');
    expect(tool.status.code).toBe(2);
    expect(tool.status.message).not.toContain('the thing is broken');
    expect(tool.status.message).toMatch(/failed/);
    expect(tool.attributes['error.type']).toBe('tool_error');
    expect(onlyOne(spans, 'invoke_agent').status.code).toBe(0);
    expect(JSON.stringify(spans, (_key, value) => (typeof value === 'bigint' ? String(value) : value))).not.toContain('the thing is broken');
  });

  it('with captureContent, a failed tool call says what the tool said', async () => {
    scriptTwoTurnLoop(upstream, flavor, 'tools__fail');
    const client = await start({ captureContent: true });
    await client.responses.create({ model: flavor.model, input: 'Break it.' });
    await stop();
    const tool = onlyOne(await receiver.waitForSpans(4), 'execute_tool tools__fail');
    expect(tool.status.message).toContain('the thing is broken');
  });

  it("a call the gateway answered without running it (no such tool) is an error span too, its message the error the model was given, unwrapped", async () => {
    scriptTwoTurnLoop(upstream, flavor, 'tools__nosuchtool');
    const client = await start();
    const response = await client.responses.create({ model: flavor.model, input: 'Call what is not there.' });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    await stop();

    const spans = await receiver.waitForSpans(4);
    const tool = onlyOne(spans, 'execute_tool tools__nosuchtool');
    expect(tool.status.code).toBe(2);
    expect(tool.status.message).toMatch(/^There is no tool named 'tools__nosuchtool'/);
    expect(tool.attributes['error.type']).toBe('tool_refused');
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_add');
  });

  it('an upstream that refuses the first call: the client gets the HTTP error, the trace says why', async () => {
    upstream.setScript(() => flavor.failAtOnce().reply);
    await start();
    const caller = clientTrace();
    const refused = await fetch(`${gateway!.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({ model: flavor.model, input: 'Hi' }),
    });
    expect(refused.status).toBe(flavor.failAtOnce().status);
    const body = await refused.json();
    assertErrorEnvelope(body);
    await stop();

    const spans = await receiver.waitForSpans(2);
    const root = onlyOne(spans, 'invoke_agent');
    const call = onlyOne(spans, `chat ${flavor.model}`);
    expect(root.parentSpanId).toBe(caller.spanId);
    expect(root.status.code).toBe(2);
    expect(root.attributes['loopgate.response.status']).toBe('refused');
    expect(call.status.code).toBe(2);
    expect(root.attributes['error.type']).toBe(body.error.code);
    expect(call.attributes['error.type']).toBe(body.error.code);
  });
});

describe('tracing switched off or handed a broken traceparent', () => {
  const flavor = flavors[0]!;
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const receiver = new OtlpReceiver();
  let upstreamUrl: string;
  let mcpUrl: string;
  let tracesUrl: string;

  beforeAll(async () => {
    [upstreamUrl, mcpUrl, tracesUrl] = await Promise.all([upstream.start(), mcp.start(), receiver.start()]);
    scriptTwoTurnLoop(upstream, flavor);
  });
  afterAll(async () => {
    await Promise.all([upstream.close(), mcp.close(), receiver.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    receiver.spans.length = 0;
    mcp.callMeta.length = 0;
  });

  it('off: no spans, and nothing of the client\'s trace goes upstream or to MCP servers', async () => {
    const gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl }] }, tracing: { enabled: false, endpoint: tracesUrl } });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      const response = await client.responses.create({ model: flavor.model, input: 'What is 2 + 3?' }, { headers: { traceparent: clientTrace().traceparent } });
      assertValidResponse(response);
      expect(response.output_text).toBe('The sum is 5.');
    } finally {
      await gateway.close();
    }
    expect(receiver.requests).toHaveLength(0);
    expect(upstream.requests.filter((request) => request.method === 'POST')).toHaveLength(2);
    for (const request of upstream.requests) expect(request.headers.traceparent).toBeUndefined();
    expect(mcp.callMeta).toHaveLength(1);
    expect(mcp.callMeta[0]!.meta?.traceparent).toBeUndefined();
  });

  it('a malformed traceparent is ignored: the response starts a trace of its own', async () => {
    const gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl }] }, tracing: { endpoint: tracesUrl } });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      const response = await client.responses.create({ model: flavor.model, input: 'What is 2 + 3?' }, { headers: { traceparent: '00-not-a-trace-01' } });
      assertValidResponse(response);
    } finally {
      await gateway.close();
    }
    const spans = await receiver.waitForSpans(4);
    const root = onlyOne(spans, 'invoke_agent');
    expect(root.parentSpanId).toBeNull();
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const span of spans) expect(span.traceId).toBe(root.traceId);
    expect(parseTraceparent(upstream.requests.find((request) => request.method === 'POST')!.headers.traceparent).traceId).toBe(root.traceId);
  });
});

describe('traces of responses on a WebSocket and in the background', () => {
  const flavor = flavors[0]!;
  const upstream = new ScriptedChatUpstream();
  const receiver = new OtlpReceiver();
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const [upstreamUrl, tracesUrl] = await Promise.all([upstream.start(), receiver.start()]);
    scriptModel(upstream, flavor, () => ({ text: 'Hello there' }));
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), tracing: { endpoint: tracesUrl } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all([upstream.close(), receiver.close()]);
  });

  it('every response on a connection continues the trace of its upgrade request; a background response its creating request\'s', async () => {
    const upgrade = clientTrace();
    const socket = new SocketClient(client, { headers: { traceparent: upgrade.traceparent } });
    const first = finalOf(await socket.create({ model: flavor.model, input: 'Hi', store: false }));
    const second = finalOf(await socket.create({ model: flavor.model, input: 'Again', previous_response_id: first.id, store: false }));
    assertValidResponse(first);
    assertValidResponse(second);
    socket.close();
    await socket.closed;

    const creator = clientTrace();
    const queued = await client.responses.create({ model: flavor.model, input: 'Later', background: true }, { headers: { traceparent: creator.traceparent } });
    expect(queued.status).toBe('queued');
    await waitFor(async () => (await client.responses.retrieve(queued.id)).status === 'completed');
    await gateway.close();

    const spans = await receiver.waitForSpans(6);
    const responses = byName(spans, 'invoke_agent');
    expect(responses.map((span) => span.attributes['gen_ai.response.id']).sort()).toEqual([first.id, second.id, queued.id].sort());
    for (const id of [first.id, second.id]) {
      const span = responses.find((entry) => entry.attributes['gen_ai.response.id'] === id)!;
      expect(span.traceId).toBe(upgrade.traceId);
      expect(span.parentSpanId).toBe(upgrade.spanId);
    }
    const background = responses.find((entry) => entry.attributes['gen_ai.response.id'] === queued.id)!;
    expect(background).toMatchObject({ traceId: creator.traceId, parentSpanId: creator.spanId });
    expect(background.attributes).toMatchObject({ 'loopgate.background': true, 'loopgate.response.status': 'completed' });
    expect(responses.find((entry) => entry.attributes['gen_ai.response.id'] === second.id)!.attributes['loopgate.previous_response_id']).toBe(first.id);
    // Each response's model call hangs under it.
    for (const response of responses) expect(spans.filter((span) => span.parentSpanId === response.spanId).map((span) => span.name)).toEqual([`chat ${flavor.model}`]);
  });
});

/**
 * A routed alias's model call that failed over: its span is the call the
 * client's answer came from — the deployment that served it, its address
 * and its model — not the first deployment asked with the second's address.
 */
describe('traces of a routed alias that failed over', () => {
  const upstream = new ScriptedChatUpstream();
  const receiver = new OtlpReceiver();
  let gateway: RunningGateway | null = null;
  const resourceAttributes = process.env.OTEL_RESOURCE_ATTRIBUTES;

  beforeAll(async () => {
    const [upstreamUrl, tracesUrl] = await Promise.all([upstream.start(), receiver.start()]);
    // Read as the tracer starts, as every OpenTelemetry SDK reads it.
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment=staging,team=platform';
    // The first deployment (by weight, always first) is overloaded; the second answers.
    upstream.setScript((request) => (request.body.model === 'model-a' ? { kind: 'json', status: 503, body: { error: { message: 'overloaded', type: 'server_error', code: null, param: null } } } : { kind: 'json', body: { id: 'chatcmpl-b', object: 'chat.completion', created: 0, model: 'model-b', choices: [{ index: 0, message: { role: 'assistant', content: 'served by b' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } } }));
    gateway = await startGateway(upstreamUrl, {
      providers: { a: { type: 'openai-chat', baseUrl: upstreamUrl, apiKey: 'ka' }, b: { type: 'openai-chat', baseUrl: upstreamUrl, apiKey: 'kb' } },
      models: { chat: { deployments: [{ provider: 'a', model: 'model-a', weight: 1_000_000 }, { provider: 'b', model: 'model-b' }] } },
      tracing: { endpoint: tracesUrl },
    });
  });
  afterAll(async () => {
    if (resourceAttributes === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
    else process.env.OTEL_RESOURCE_ATTRIBUTES = resourceAttributes;
    await gateway?.close();
    await Promise.all([upstream.close(), receiver.close()]);
  });

  it('the model-call span names the deployment that served it and its model', async () => {
    const client = new OpenAI({ baseURL: gateway!.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({ model: 'chat', input: 'Hi' });
    assertValidResponse(response);
    expect(response.output_text).toBe('served by b');
    expect(upstream.requests.map((request) => request.body.model)).toEqual(['model-a', 'model-b']);
    await gateway!.close();
    gateway = null;
    const spans = await receiver.waitForSpans(2);
    const call = spans.find((span) => span.attributes['gen_ai.operation.name'] === 'chat')!;
    expect(call.name).toBe('chat model-b');
    expect(call.attributes['gen_ai.request.model']).toBe('model-b');
    expect(call.attributes['gen_ai.response.model']).toBe('model-b');
    // The refused attempt is on the call's span, when it came: which deployment, how, where.
    expect(call.events).toHaveLength(1);
    const [failover] = call.events;
    expect(failover!.name).toBe('loopgate.failover');
    expect(failover!.attributes).toMatchObject({ 'loopgate.deployment': 'a/model-a', 'loopgate.provider': 'a', 'loopgate.upstream_model': 'model-a', 'error.type': 'upstream_error', 'exception.message': expect.stringMatching(/503: overloaded/), 'gen_ai.provider.name': 'openai', 'server.address': '127.0.0.1' });
    expect(failover!.timeNanos).toBeGreaterThanOrEqual(call.startNanos);
    expect(failover!.timeNanos).toBeLessThanOrEqual(call.endNanos);
    expect(call.status.code).not.toBe(2);
    const root = spans.find((span) => span.name.startsWith('invoke_agent'))!;
    expect(root.attributes['loopgate.upstream_model']).toBe('model-b');
    // The environment's resource attributes, and an instance id of the process's own.
    expect(root.resource).toMatchObject({ 'service.name': 'loopgate', 'deployment.environment': 'staging', team: 'platform', 'service.instance.id': expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});
