import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LIMITS } from '../../src/protocol/request-limits.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
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

  it('counts and sizes: input items, tools, content parts and strings over their limits are 400s naming the parameter', async () => {
    await rejected({ model: 'm', input: Array.from({ length: REQUEST_LIMITS.maxInputItems + 1 }, () => ({ role: 'user', content: 'x' })) }, 'input', 'invalid_value');
    await rejected({ model: 'm', input: 'x', tools: Array.from({ length: REQUEST_LIMITS.maxTools + 1 }, (_, index) => fn(`t${index}`)) }, 'tools', 'invalid_value');
    await rejected({ model: 'm', input: [{ role: 'user', content: Array.from({ length: REQUEST_LIMITS.maxContentParts + 1 }, () => ({ type: 'input_text', text: 'x' })) }] }, 'input[0].content', 'invalid_value');
    await rejected({ model: 'm', input: 'x', instructions: 'i'.repeat(REQUEST_LIMITS.maxTextChars + 1) }, 'instructions', 'invalid_value');
    await rejected({ model: 'm', input: 'x', tools: [{ ...fn('t'), description: 'd'.repeat(REQUEST_LIMITS.maxDescriptionChars + 1) }] }, 'tools[0].description', 'invalid_value');
    await rejected({ model: 'm', previous_response_id: 'r'.repeat(REQUEST_LIMITS.maxIdChars + 1), input: 'x' }, 'previous_response_id', 'invalid_value');
    // At the limits themselves, accepted.
    const atLimits = await post({ model: 'm', input: [{ role: 'user', content: Array.from({ length: REQUEST_LIMITS.maxContentParts }, () => ({ type: 'input_text', text: 'x' })) }], tools: Array.from({ length: 64 }, (_, index) => fn(`t${index}`)) });
    expect(atLimits.status).toBe(200);
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
