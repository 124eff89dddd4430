import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LIMITS } from '../../src/protocol/request-limits.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { ScriptedChatUpstream, textCompletion, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** An object schema nested `levels` objects deep: {type, properties: {a: {type, properties: {a: …}}}}. */
function nestedSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 0; level < levels; level++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

/** The same as JSON text, for depths JSON.stringify itself cannot reach. */
function nestedSchemaJson(levels: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
}

/** Nesting depth of a JSON value, objects and arrays one level each (iterative: the values tested are deep). */
function depthOf(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** A model that calls get_weather and lookup in one turn, then answers. */
function twoClientCalls(request: RecordedRequest): UpstreamReply {
  const answered = (request.body.messages as any[]).some((message) => message.role === 'tool');
  if (answered) return textCompletion('done');
  const calls = ['get_weather', 'lookup'].map((name, index) => ({ id: `call_${index}`, type: 'function', function: { name, arguments: '{}' } }));
  return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 3, completion_tokens: 3 } } };
}

const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });

describe('every input is bounded before it is used', () => {
  const upstream = new ScriptedChatUpstream(() => textCompletion('ok'));
  let gateway: RunningGateway;
  let upstreamUrl: string;
  const post = async (body: unknown) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  const rejected = async (body: unknown, param: string | RegExp, code: string) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    assertErrorEnvelope(answer);
    expect(answer.error.code).toBe(code);
    if (typeof param === 'string') expect(answer.error.param).toBe(param);
    else expect(answer.error.param).toMatch(param);
    return answer.error;
  };

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, { server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 64 * 1024 * 1024 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('nesting depth: the limit itself is accepted, one level more is a 400 naming the field', async () => {
    const max = REQUEST_LIMITS.maxJsonDepth;
    // body → tools → tools[0] → parameters: three levels before the schema's own.
    const atLimit = { model: 'm', input: 'x', tools: [{ ...fn('deep'), parameters: nestedSchema((max - 3 - 1) / 2) }] };
    expect(depthOf(atLimit)).toBeLessThanOrEqual(max);
    const accepted = await post(atLimit);
    expect(accepted.status).toBe(200);
    assertValidResponse(accepted.body);

    const oneMore = (max - 3) / 2 + 1;
    const error = await rejected({ model: 'm', input: 'x', tools: [{ ...fn('deep'), parameters: nestedSchema(oneMore) }] }, /^tools\[0\]\.parameters\.properties\.a\./, 'nesting_too_deep');
    expect(error.message).toContain(`${max} levels`);
    // The deepest field's path is a hundred segments long: whole segments from the start, then an ellipsis.
    expect(error.param!.length).toBeLessThanOrEqual(121);
    expect(error.param).toMatch(/\.(properties|a)…$/);
    expect(error.message).toContain(error.param!);
  });

  it('nesting depth of JSON inside resent arguments: at the limit accepted, one level more a 400 on input[i].arguments', async () => {
    const max = REQUEST_LIMITS.maxJsonDepth;
    const argumentsOf = (depth: number) => `${'['.repeat(depth)}"]]]{{{"${']'.repeat(depth)}`;
    const resent = (args: string) => ({
      model: 'm',
      tools: [fn('f')],
      input: [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: args }, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }],
    });
    expect((await post(resent(argumentsOf(max)))).status).toBe(200);
    const error = await rejected(resent(argumentsOf(max + 1)), 'input[1].arguments', 'nesting_too_deep');
    expect(error.message).toContain(`${max} levels`);
    // An approval request resent by a stateless client carries arguments too.
    await rejected(
      { model: 'm', input: [{ role: 'user', content: 'x' }, { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 's', name: 't', arguments: argumentsOf(5_000) }, { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }] },
      'input[1].arguments',
      'nesting_too_deep',
    );
  });

  it('thousands of levels, where the stack used to overflow, are a 400 in every place', async () => {
    const raw = async (body: string) => {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as any;
      assertErrorEnvelope(answer);
      return answer.error;
    };
    expect(await raw(`{"model":"m","input":"x","tools":[{"type":"function","name":"deep","parameters":${nestedSchemaJson(5_000)}}]}`)).toMatchObject({ code: 'nesting_too_deep', param: expect.stringMatching(/^tools\[0\]\.parameters\./) });
    expect(await raw(`{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"out","schema":${nestedSchemaJson(5_000)}}}}`)).toMatchObject({ code: 'nesting_too_deep', param: expect.stringMatching(/^text\.format\.schema\./) });
    expect(await raw(`{"model":"m","input":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toMatchObject({ code: 'nesting_too_deep', param: expect.stringMatching(/^input\[0\]\[0\]/) });
    // The proto-poisoning guard of the JSON parser walks objects that name __proto__: deep ones must not overflow it either.
    await raw(`{"model":"m","input":"x","metadata":${'{"__proto__":'.repeat(20_000)}1${'}'.repeat(20_000)}}`);
  });

  it('counts and sizes: each limit itself is accepted, one more is a 400 naming the parameter in OpenAI\'s codes', async () => {
    const L = REQUEST_LIMITS;
    const items = (count: number) => Array.from({ length: count }, () => ({ role: 'user', content: 'x' }));
    const tools = (count: number) => Array.from({ length: count }, (_, index) => fn(`t${index}`));
    const namespace = (name: string, count: number) => ({ type: 'namespace', name, description: 'd', tools: tools(count) });
    const parts = (count: number) => [{ role: 'user', content: Array.from({ length: count }, () => ({ type: 'input_text', text: 'x' })) }];
    /** A schema whose JSON text is exactly `chars` long. */
    const schemaOf = (chars: number) => ({ type: 'object', description: 'd'.repeat(chars - JSON.stringify({ type: 'object', description: '' }).length) });
    const resentCall = (args: string, output: string) => [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: args }, { type: 'function_call_output', call_id: 'call_1', output }];
    const mcpTool = (headers: Record<string, string>) => ({ type: 'mcp', server_label: 's', server_url: 'https://mcp.invalid/mcp', headers });
    const cases: { name: string; body: (size: number) => Record<string, unknown>; limit: number; param: string; code: string }[] = [
      { name: 'input items', body: (n) => ({ input: items(n) }), limit: L.maxInputItems, param: 'input', code: 'array_above_max_length' },
      { name: 'tools', body: (n) => ({ input: 'x', tools: tools(n) }), limit: L.maxTools, param: 'tools', code: 'array_above_max_length' },
      { name: 'functions of namespaces', body: (n) => ({ input: 'x', tools: [namespace('a', L.maxTools / 2), namespace('b', n - L.maxTools / 2)] }), limit: L.maxTools, param: 'tools', code: 'array_above_max_length' },
      { name: 'content parts', body: (n) => ({ input: parts(n) }), limit: L.maxContentParts, param: 'input[0].content', code: 'array_above_max_length' },
      { name: 'instructions', body: (n) => ({ input: 'x', instructions: 'i'.repeat(n) }), limit: L.maxTextChars, param: 'instructions', code: 'string_above_max_length' },
      { name: 'arguments', body: (n) => ({ input: resentCall(`"${'a'.repeat(n - 2)}"`, 'ok'), tools: [fn('f')] }), limit: L.maxTextChars, param: 'input[1].arguments', code: 'string_above_max_length' },
      { name: 'a tool output', body: (n) => ({ input: resentCall('{}', 'o'.repeat(n)), tools: [fn('f')] }), limit: L.maxTextChars, param: 'input[2].output', code: 'string_above_max_length' },
      { name: 'a tool description', body: (n) => ({ input: 'x', tools: [{ ...fn('t'), description: 'd'.repeat(n) }] }), limit: L.maxDescriptionChars, param: 'tools[0].description', code: 'string_above_max_length' },
      { name: 'a tool schema', body: (n) => ({ input: 'x', tools: [{ ...fn('t'), parameters: schemaOf(n) }] }), limit: L.maxSchemaChars, param: 'tools[0].parameters', code: 'schema_too_large' },
      { name: 'an output schema', body: (n) => ({ input: 'x', text: { format: { type: 'json_schema', name: 'out', schema: schemaOf(n) } } }), limit: L.maxSchemaChars, param: 'text.format.schema', code: 'schema_too_large' },
      { name: 'previous_response_id', body: (n) => ({ input: 'x', previous_response_id: 'r'.repeat(n) }), limit: L.maxIdChars, param: 'previous_response_id', code: 'string_above_max_length' },
      { name: 'MCP servers', body: (n) => ({ input: 'x', tools: Array.from({ length: n }, (_, index) => ({ ...mcpTool({}), server_label: `s${index}` })) }), limit: L.maxMcpServers, param: 'tools', code: 'array_above_max_length' },
      { name: 'an MCP header', body: (n) => ({ input: 'x', tools: [mcpTool({ authorization: 'b'.repeat(n) })] }), limit: L.maxUrlChars, param: 'tools[0].headers.authorization', code: 'string_above_max_length' },
    ];
    for (const { name, body, limit, param, code } of cases) {
      const error = await rejected({ model: 'm', ...body(limit + 1) }, param, code);
      expect(error.message, name).toContain(String(limit));
      // At the limit the body is accepted (an id that long names no stored response: a 404, not a 400).
      const atLimit = await post({ model: 'm', ...body(limit) });
      expect(atLimit.status, name).toBe(param === 'previous_response_id' ? 404 : 200);
    }
    await rejected({ model: 'm', input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }, 'metadata', 'invalid_value');
    await rejected({ model: 'm', input: 'x', metadata: { a: 'v'.repeat(513) } }, 'metadata.a', 'string_above_max_length');
  }, 60_000);

  it('names that are keys of every object (a model called __proto__, constructor, toString) are names like others', async () => {
    upstream.setScript(() => textCompletion('ok'));
    for (const model of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const answer = await post({ model, input: 'x', metadata: { constructor: 'c', toString: 't' } });
      expect(answer.status, model).toBe(200);
      expect(upstream.requests.at(-1)!.body.model).toBe(model);
    }
  });

  it('a function_call_output that answers no call of the conversation is a 400 on its call_id; stateless resends keep working', async () => {
    upstream.setScript(() => textCompletion('ok'));
    const before = upstream.requests.length;
    await rejected({ model: 'm', input: [{ role: 'user', content: 'x' }, { type: 'function_call_output', call_id: 'call_nowhere', output: '1' }] }, 'input[1].call_id', 'unknown_call_id');
    expect(upstream.requests.length).toBe(before);

    // The Agents SDK and the AI SDK resend the call with its output: fine.
    const stateless = await post({
      model: 'm',
      tools: [fn('get_weather')],
      input: [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: '14' }],
    });
    expect(stateless.status).toBe(200);

    // With previous_response_id, the stored chain's calls count; others do not.
    upstream.setScript(twoClientCalls);
    const paused = await post({ model: 'm', input: 'x', tools: [fn('get_weather'), fn('lookup')] });
    expect(paused.body.output.filter((item: any) => item.type === 'function_call').length).toBeGreaterThan(0);
    await rejected({ model: 'm', previous_response_id: paused.body.id, input: [{ type: 'function_call_output', call_id: 'call_9', output: '1' }] }, 'input[0].call_id', 'unknown_call_id');

    // Calls named by item_reference (the AI SDK's stored multi-turn) count like resent ones.
    const [weather, lookup] = paused.body.output.filter((item: any) => item.type === 'function_call');
    upstream.setScript(() => textCompletion('ok'));
    const referenced = await post({
      model: 'm',
      tools: [fn('get_weather'), fn('lookup')],
      input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: weather.id }, { type: 'item_reference', id: lookup.id }, { type: 'function_call_output', call_id: weather.call_id, output: '14' }, { type: 'function_call_output', call_id: lookup.call_id, output: 'found' }],
    });
    expect(referenced.status).toBe(200);
    const sent = upstream.requests.at(-1)!.body.messages as any[];
    expect(sent.filter((message) => message.role === 'tool').map((message) => message.tool_call_id)).toEqual([weather.call_id, lookup.call_id]);
    await rejected({ model: 'm', input: [{ type: 'item_reference', id: weather.id }, { type: 'function_call_output', call_id: 'call_elsewhere', output: '1' }] }, 'input[1].call_id', 'unknown_call_id');

    // The same rule for a freeform tool's output: it must answer a custom_tool_call.
    const patch = { type: 'custom', name: 'apply_patch', description: 'Edits files.' };
    await rejected({ model: 'm', tools: [patch], input: [{ role: 'user', content: 'x' }, { type: 'custom_tool_call_output', call_id: 'call_nowhere', output: 'done' }] }, 'input[1].call_id', 'unknown_call_id');
    const freeform = await post({
      model: 'm',
      tools: [patch],
      input: [{ role: 'user', content: 'x' }, { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' }, { type: 'custom_tool_call_output', call_id: 'call_p', output: 'done' }],
    });
    expect(freeform.status).toBe(200);
  });

  it('answering only some calls of a paused response is a 400, whether or not the tools are sent again', async () => {
    upstream.setScript(twoClientCalls);
    const paused = await post({ model: 'm', input: 'x', tools: [fn('get_weather'), fn('lookup')] });
    expect(paused.body.output.filter((item: any) => item.type === 'function_call').length).toBeGreaterThan(0);
    const partial = [{ type: 'function_call_output', call_id: 'call_0', output: '14' }];
    for (const tools of [[fn('get_weather'), fn('lookup')], undefined]) {
      const error = await rejected({ model: 'm', previous_response_id: paused.body.id, input: partial, ...(tools && { tools }) }, 'input', 'missing_function_call_output');
      expect(error.message).toContain('call_1');
    }
    const answered = await post({ model: 'm', previous_response_id: paused.body.id, input: [...partial, { type: 'function_call_output', call_id: 'call_1', output: 'found' }] });
    expect(answered.status).toBe(200);
    expect(answered.body.output_text ?? answered.body.output.at(-1).content[0].text).toBe('done');
  });

  it('a call to a tool nobody offers gets its error output when the response pauses, so only the client\'s own calls are left to answer', async () => {
    upstream.setScript((request) => {
      if ((request.body.messages as any[]).some((message) => message.role === 'tool')) return textCompletion('done');
      const calls = [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
        { id: 'call_b', type: 'function', function: { name: 'invented', arguments: '{}' } },
      ];
      return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] } };
    });
    // The loop is in charge (a server-side executor is present), so the response pauses with requires_action.
    const looping = await startGateway(upstreamUrl, {}, {}, [new MockExecutor(['server_side'])]);
    const postTo = async (body: unknown) => (await fetch(`${looping.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
    try {
      const paused = await postTo({ model: 'm', input: 'x', tools: [fn('get_weather')] });
      expect(paused.status).toBe('requires_action');
      const outputs = paused.output.filter((item: any) => item.type === 'function_call_output');
      expect(outputs).toEqual([expect.objectContaining({ call_id: 'call_b', output: expect.stringContaining('invented') })]);
      const resumed = await postTo({ model: 'm', previous_response_id: paused.id, input: [{ type: 'function_call_output', call_id: 'call_a', output: '14' }] });
      expect(resumed.status).toBe('completed');
    } finally {
      await looping.close();
    }
  });
});

describe('approved MCP calls are answered in the client\'s names', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let calc: (extra?: Record<string, unknown>) => Record<string, unknown>;
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', ...body }) });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** The model calls calc's `add` until it sees a result. */
  const callsAdd = (request: RecordedRequest): UpstreamReply => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool');
    if (results.length > 0) return textCompletion(`saw ${results.map((message) => message.content).join(' | ')}`);
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_add', type: 'function', function: { name: 'calc__add', arguments: '{"a":1,"b":2}' } }] }, finish_reason: 'tool_calls' }] } };
  };

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    calc = (extra = {}) => ({ type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'always', ...extra });
    gateway = await startGateway(upstreamUrl, { mcp: { allowedUrls: [`${new URL(mcpUrl).origin}/`] } });
    upstream.setScript(callsAdd);
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('the server still named but the tool no longer allowed: the mcp_call error names the tool and server, never calc__add; nothing runs', async () => {
    const paused = await post({ input: 'add', tools: [calc()] });
    const request = paused.body.output.find((item: any) => item.type === 'mcp_approval_request');
    expect(request).toMatchObject({ server_label: 'calc', name: 'add' });
    const calls = mcp.calls.length;
    const resumed = await post({ previous_response_id: paused.body.id, tools: [calc({ allowed_tools: ['slow'] })], input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(resumed.status).toBe(200);
    const call = resumed.body.output.find((item: any) => item.type === 'mcp_call');
    expect(call).toMatchObject({ approval_request_id: request.id, name: 'add', server_label: 'calc' });
    expect(call.error).toMatch(/'add'.*'calc'/);
    expect(JSON.stringify(resumed.body.output)).not.toContain('calc__add');
    expect(mcp.calls.length).toBe(calls);
  });

  it('a stateless approval (the Agents SDK\'s resend) without the server named is a 400 on the approval response', async () => {
    const paused = await post({ input: 'add', tools: [calc()], store: false });
    const [listing, request] = paused.body.output;
    const upstreamBefore = upstream.requests.length;
    const refused = await post({ input: [{ role: 'user', content: 'add' }, listing, request, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(refused.status).toBe(400);
    assertErrorEnvelope(refused.body);
    expect(refused.body.error).toMatchObject({ code: 'mcp_server_not_named', param: 'input[3]' });
    expect(refused.body.error.message).toContain("'calc'");
    expect(refused.body.error.message).not.toContain('calc__add');
    expect(upstream.requests.length).toBe(upstreamBefore);
  });
});
