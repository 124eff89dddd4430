import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidExtension, assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { flavors, type ModelTurn, type ProviderFlavor, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../support/scripted-chat-upstream.ts';

const ANSWER_SCHEMA = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };

/**
 * The loop controls of seeds 000–002 through the OpenAI SDK, over both
 * upstream APIs, streamed and not: terminal tools, a final answer at the
 * limit, validated output with retries (schema, an HTTP validator, an MCP
 * validator), the completion check and the per-turn cap. The model is
 * scripted from what it has seen, so each test also proves what the gateway
 * told it.
 */
describe.each(flavors)('loop controls over $name', (flavor: ProviderFlavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const judged: string[] = [];
  let validatorServer: Server;
  let validatorUrl: string;
  let gateway: RunningGateway;
  let validated: RunningGateway;
  let client: OpenAI;
  let model: (seen: Seen[], request: RecordedRequest) => ModelTurn = () => ({ text: 'Hello' });
  let base: Record<string, any>;
  let upstreamBase = '';

  mcp.extraTools.push((server) =>
    server.registerTool('judge', { description: 'Judges an answer.', inputSchema: { answer: z.string(), text_format: z.any() } }, async ({ answer }) => {
      judged.push(answer);
      return { content: [{ type: 'text', text: JSON.stringify(answer.includes('please') ? { valid: true } : { valid: false, errors: ['Say please.'] }) }] };
    }),
  );

  beforeAll(async () => {
    validatorServer = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const { answer } = JSON.parse(body);
        judged.push(answer);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.startsWith('Dear') ? { valid: true } : { valid: false, errors: ['Start with "Dear".'] }));
      });
    });
    await new Promise<void>((resolve) => validatorServer.listen(0, '127.0.0.1', resolve));
    validatorUrl = `http://127.0.0.1:${(validatorServer.address() as AddressInfo).port}/judge`;
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    upstream.setScript((request) => flavor.render(request, model(flavor.seen(request), request)));
    upstreamBase = upstreamUrl;
    base = { ...flavor.config(upstreamUrl), mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add', 'fail', 'judge'] }] } };
    gateway = await startGateway(upstreamUrl, { ...base, loop: { maxTurns: 4, requestLimits: { maxTurns: 6, maxValidationAttempts: 3 } } });
    validated = await startGateway(upstreamUrl, { ...base, loop: { outputValidation: { enabled: true, maxAttempts: 2, validator: { type: 'http', url: validatorUrl } } } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), validated.close()]);
    await Promise.all([upstream.close(), mcp.close(), new Promise((resolve) => validatorServer.close(resolve))]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    mcp.calls.length = 0;
    judged.length = 0;
  });

  /** The same request as JSON and as a stream: both final responses, the stream's events, and the model calls each made. */
  async function both(body: Record<string, unknown>, on: OpenAI = client): Promise<{ json: any; streamed: any; events: any[]; calls: number }> {
    // What the tests send is what openapi/loopgate-extensions.json documents.
    if (body['loopgate:loop']) assertValidExtension('CreateResponseExtensions', { 'loopgate:loop': body['loopgate:loop'] });
    const json: any = await on.responses.create({ model: flavor.model, ...body } as any);
    assertValidResponse(json);
    const calls = upstream.requests.length;
    const events: any[] = [];
    for await (const event of (await on.responses.create({ model: flavor.model, ...body, stream: true } as any)) as any) events.push(event);
    const streamed = assertEventStreamInvariants(events);
    expect(upstream.requests.length).toBe(calls * 2);
    for (const response of [json, streamed]) if (response['loopgate:loop']) assertValidExtension('ResponseResourceExtensions', { 'loopgate:loop': response['loopgate:loop'] });
    return { json, streamed, events, calls };
  }
  const results = (seen: Seen[]) => seen.filter((entry) => entry.kind === 'result');
  const userTexts = (request: RecordedRequest) => flavor.seen(request).flatMap((entry) => (entry.kind === 'user' ? [entry.text] : []));

  it('terminal tools: the turn that called one runs all its calls, then the response ends without another model call', async () => {
    model = () => ({ calls: [{ id: 'c1', name: 'tools__add', args: { a: 1, b: 2 } }, { id: 'c2', name: 'tools__add', args: { a: 3, b: 4 } }] });
    const { json, streamed, calls } = await both({ input: 'Add', 'loopgate:loop': { terminal_tools: ['tools__add'] } });
    expect(calls).toBe(1);
    for (const response of [json, streamed]) {
      expect(response.status).toBe('completed');
      expect(response.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
      expect(response.output.slice(2, 4).map((item: any) => item.output)).toEqual(['3', '7']);
      // The terminal call's output is the answer too, for clients that go on until a message comes.
      expect(response.output[4]).toMatchObject({ role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '3' }] });
      expect(response['loopgate:loop']).toEqual({ ended_by: { type: 'terminal_tool', name: 'tools__add', call_id: 'c1' } });
    }
    expect(mcp.calls).toHaveLength(4);
  });

  it('terminal tools shown as mcp_call items: ended_by.call_id names the mcp_call a client can find', async () => {
    model = () => ({ calls: [{ id: 'c1', name: 'tools__add', args: { a: 1, b: 2 } }] });
    const shownAsMcp = await startGateway(upstreamBase, { ...base, mcp: { ...base.mcp, callItems: 'mcp' } });
    try {
      const client = new OpenAI({ baseURL: shownAsMcp.baseURL, apiKey: 'k', maxRetries: 0 });
      const response: any = await client.responses.create({ model: flavor.model, input: 'Add', 'loopgate:loop': { terminal_tools: ['tools__add'] } } as any);
      assertValidResponseWithMcpItems(response);
      const call = response.output.find((item: any) => item.type === 'mcp_call');
      expect(response['loopgate:loop']).toEqual({ ended_by: { type: 'terminal_tool', name: 'tools__add', call_id: call.id } });
    } finally {
      await shownAsMcp.close();
    }
  });

  it("terminal tools: a terminal call beside a client's call runs while the response waits; the client's answer then ends it without another model call", async () => {
    model = (seen) => (results(seen).length > 0 ? { text: 'Called again.' } : { calls: [{ id: 't1', name: 'tools__add', args: { a: 1, b: 2 } }, { id: 'w1', name: 'get_weather', args: { city: 'Oslo' } }] });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const loop = { terminal_tools: ['tools__add'] };
    // MCP calls shown as mcp_call items run at once, while the response waits for the client's call.
    const shownAsMcp = await startGateway(upstreamBase, { ...base, mcp: { ...base.mcp, callItems: 'mcp' } });
    const client = new OpenAI({ baseURL: shownAsMcp.baseURL, apiKey: 'k', maxRetries: 0 });
    const paused: any = await client.responses.create({ model: flavor.model, input: 'Add, and the weather', tools, 'loopgate:loop': loop } as any);
    assertValidResponseWithMcpItems(paused);
    expect(paused.output.filter((item: any) => item.type === 'mcp_call').map((item: any) => item.output)).toEqual(['3']);
    for (const stream of [false, true]) {
      const body = { model: flavor.model, previous_response_id: paused.id, input: [{ type: 'function_call_output', call_id: 'w1', output: 'sunny' }], tools, 'loopgate:loop': loop } as any;
      const events: any[] = [];
      if (stream) for await (const event of (await client.responses.create({ ...body, stream: true })) as any) events.push(event);
      const response: any = stream ? assertEventStreamInvariants(events) : await client.responses.create(body);
      assertValidResponse(response);
      expect(response.status).toBe('completed');
      expect(response.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: '3' })] })]);
      // The call as the client saw it: its mcp_call.
      expect(response['loopgate:loop']).toEqual({ ended_by: { type: 'terminal_tool', name: 'tools__add', call_id: paused.output.find((item: any) => item.type === 'mcp_call').id } });
    }
    // The one model call that made the calls: neither continuation called the model.
    expect(upstream.requests).toHaveLength(1);
    await shownAsMcp.close();
  });

  it("terminal tools under a JSON text.format: an output that is no answer in that format is an ordinary call's, and the model answers in the format", async () => {
    model = (seen) => (results(seen).length > 0 ? { text: '{"answer": 3}' } : { calls: [{ id: 'c1', name: 'tools__add', args: { a: 1, b: 2 } }] });
    const text = { format: { type: 'json_schema', name: 'answer', schema: ANSWER_SCHEMA, strict: true } };
    const { json, streamed, calls } = await both({ input: 'Add', text, 'loopgate:loop': { terminal_tools: ['tools__add'] } });
    expect(calls).toBe(2);
    for (const response of [json, streamed]) {
      expect(response.status).toBe('completed');
      // What responses.parse() reads: the model's answer, not the tool's bare "3".
      expect(JSON.parse(response.output.at(-1).content[0].text)).toEqual({ answer: 3 });
      expect(response['loopgate:loop']).toBeUndefined();
    }
  });

  it('terminal tools: a terminal call that fails goes back to the model like any error', async () => {
    model = (seen) => (results(seen).length > 0 ? { text: 'It failed, sorry.' } : { calls: [{ id: 'f1', name: 'tools__fail', args: {} }] });
    const { json, calls } = await both({ input: 'Go', 'loopgate:loop': { terminal_tools: ['tools__fail'] } });
    expect(calls).toBe(2);
    expect(json.output_text).toBe('It failed, sorry.');
    expect(json['loopgate:loop']).toBeUndefined();
  });

  it('at the turn limit, one last call without tools asks for a final answer', async () => {
    model = (seen, request) => (flavor.toolChoice(request)?.mode === 'none' ? { text: `Best answer after ${results(seen).length} results.` } : { calls: [{ id: `a${results(seen).length}`, name: 'tools__add', args: { a: 1, b: 1 } }] });
    const { json, streamed, calls } = await both({ input: 'Keep adding', 'loopgate:loop': { max_turns: 2, at_limit: 'final_answer' } });
    expect(calls).toBe(3);
    const last = upstream.requests[2]!;
    expect(flavor.toolChoice(last)?.mode).toBe('none');
    expect(userTexts(last).at(-1)).toMatch(/reached this response's limit on the number of model turns/);
    for (const response of [json, streamed]) {
      expect(response.status).toBe('completed');
      expect(response.output_text ?? response.output.at(-1).content[0].text).toBe('Best answer after 2 results.');
      expect(response['loopgate:loop']).toEqual({ ended_by: { type: 'final_answer_at_limit', limit: 'max_turns' } });
      expect(response.usage.input_tokens).toBe(30);
    }
    // Without the switch, the same model ends incomplete at the operator's limit (4 turns).
    const plain = await client.responses.create({ model: flavor.model, input: 'Keep adding' });
    expect(plain.status).toBe('incomplete');
    expect(plain.incomplete_details?.reason).toBe('max_turns');
  });

  it('at max_tool_calls, the calls within the limit run, those over it are not run, and the model is asked for a final answer', async () => {
    model = (seen, request) =>
      flavor.toolChoice(request)?.mode === 'none'
        ? { text: `Done with ${results(seen).map((result) => result.content).join(',')}` }
        : { calls: [{ id: 'm1', name: 'tools__add', args: { a: 1, b: 1 } }, { id: 'm2', name: 'tools__add', args: { a: 2, b: 2 } }] };
    const { json, calls } = await both({ input: 'Add twice', max_tool_calls: 1, 'loopgate:loop': { at_limit: 'final_answer' } });
    expect(calls).toBe(2);
    // Once per request: JSON, then streamed.
    expect(mcp.calls.map((call) => call.args)).toEqual([{ a: 1, b: 1 }, { a: 1, b: 1 }]);
    const outputs = json.output.filter((item: any) => item.type === 'function_call_output').map((item: any) => item.output);
    expect(outputs[0]).toBe('2');
    expect(JSON.parse(outputs[1]).error).toBe('This call was not run: the response reached its limit (max_tool_calls).');
    expect(json.output.at(-1).content[0].text).toMatch(/^Done with 2,/);
    expect(json['loopgate:loop'].ended_by).toEqual({ type: 'final_answer_at_limit', limit: 'max_tool_calls' });
  });

  it('validated output: an answer that fails the schema goes back with its errors; the client sees only the accepted one', async () => {
    model = (seen) => (seen.some((entry) => entry.kind === 'user' && entry.text.startsWith('Your answer was not accepted')) ? { text: '{"answer":7}' } : { text: '{"answer":"seven"}' });
    const format = { type: 'json_schema', name: 'result', schema: ANSWER_SCHEMA, strict: true };
    const { json, streamed, events, calls } = await both({ input: 'How many?', text: { format }, 'loopgate:loop': { output_validation: { max_attempts: 3 } } });
    expect(calls).toBe(2);
    const feedback = userTexts(upstream.requests[1]!).at(-1)!;
    expect(feedback).toContain('/answer must be number');
    for (const response of [json, streamed]) {
      expect(response.status).toBe('completed');
      expect(response.output).toHaveLength(1);
      expect(response.output[0].content[0].text).toBe('{"answer":7}');
      expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
      // Both attempts are paid for: usage sums them.
      expect(response.usage.output_tokens).toBe(10);
    }
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('')).toBe('{"answer":7}');
  });

  it('validated output: when every attempt fails, the response is incomplete with the last answer and its errors', async () => {
    model = () => ({ text: 'not json' });
    const { json, streamed, calls } = await both({ input: 'How many?', text: { format: { type: 'json_schema', name: 'result', schema: ANSWER_SCHEMA } }, 'loopgate:loop': { output_validation: { max_attempts: 2 } } });
    expect(calls).toBe(2);
    for (const response of [json, streamed]) {
      expect(response.status).toBe('incomplete');
      expect(response.incomplete_details).toEqual({ reason: 'output_validation_failed' });
      expect(response.output).toHaveLength(1);
      expect(response['loopgate:loop'].output_validation).toMatchObject({ attempts: 2, valid: false, errors: [expect.stringContaining('not valid JSON')] });
    }
  });

  it('validated output: a validator that cannot answer fails the response, and the answer it never judged is neither streamed nor kept', async () => {
    model = () => ({ text: 'An answer nobody judged.' });
    const unreachable = await startGateway(upstreamBase, { ...base, loop: { outputValidation: { enabled: true, maxAttempts: 2, validator: { type: 'http', url: 'http://127.0.0.1:9/judge', timeoutMs: 1_000 } } } });
    try {
      const { json, streamed, events } = await both({ input: 'Greet' }, new OpenAI({ baseURL: unreachable.baseURL, apiKey: 'k', maxRetries: 0 }));
      for (const response of [json, streamed]) {
        expect(response.status).toBe('failed');
        expect(response.error).toMatchObject({ code: 'output_validator_failed' });
        expect(response.output.filter((item: any) => item.type === 'message')).toEqual([]);
      }
      expect(events.filter((event) => event.type === 'response.output_text.delta')).toEqual([]);
    } finally {
      await unreachable.close();
    }
  });

  it("validated output: the operator's HTTP validator judges every answer and requests cannot turn it off", async () => {
    model = (seen) => (seen.some((entry) => entry.kind === 'user' && entry.text.includes('Start with "Dear"')) ? { text: 'Dear reader, hello.' } : { text: 'Hello.' });
    const other = new OpenAI({ baseURL: validated.baseURL, apiKey: 'k', maxRetries: 0 });
    const { json, calls } = await both({ input: 'Greet' }, other);
    expect(calls).toBe(2);
    expect(json.output_text).toBe('Dear reader, hello.');
    expect(judged).toEqual(['Hello.', 'Dear reader, hello.', 'Hello.', 'Dear reader, hello.']);
    const refused = await fetch(`${validated.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'x', 'loopgate:loop': { output_validation: false } }) });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error).toMatchObject({ param: 'loopgate:loop.output_validation', code: 'invalid_value' });
  });

  it('the completion check: the first text-only answer after tools is followed by one confirmation prompt', async () => {
    model = (seen) => {
      if (results(seen).length === 0) return { calls: [{ id: 'k1', name: 'tools__add', args: { a: 2, b: 2 } }] };
      return seen.some((entry) => entry.kind === 'user' && entry.text.startsWith('Before I accept your answer')) ? { text: 'Confirmed: 4.' } : { text: 'It is 4.' };
    };
    const { json, streamed, events, calls } = await both({ input: 'Add', 'loopgate:loop': { completion_check: true } });
    expect(calls).toBe(3);
    expect(flavor.seen(upstream.requests[2]!).filter((entry) => entry.kind === 'assistant').map((entry) => (entry as any).text)).toContain('It is 4.');
    for (const response of [json, streamed]) {
      expect(response.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
      expect(response.output[2].content[0].text).toBe('Confirmed: 4.');
      expect(response['loopgate:loop']).toEqual({ completion_check: { outcome: 'confirmed' } });
    }
    expect(events.some((event) => event.type === 'response.output_text.delta' && event.delta.includes('It is 4.'))).toBe(false);
    // Without tools there is nothing to confirm: one call.
    model = () => ({ text: 'Hi.' });
    upstream.requests.length = 0;
    const plain = await both({ input: 'Hi', 'loopgate:loop': { completion_check: true } });
    expect(plain.calls).toBe(1);
  });

  it('the completion check: a model that goes back to work after the prompt carries on with its tools', async () => {
    model = (seen) => {
      const prompted = seen.some((entry) => entry.kind === 'user' && entry.text.startsWith('Before I accept your answer'));
      if (results(seen).length === 0 || (prompted && results(seen).length === 1)) return { calls: [{ id: `r${results(seen).length}`, name: 'tools__add', args: { a: 1, b: results(seen).length } }] };
      return { text: prompted ? 'Now really done.' : 'Done (not really).' };
    };
    const { json, calls } = await both({ input: 'Work', 'loopgate:loop': { completion_check: true } });
    expect(calls).toBe(4);
    expect(json.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output', 'message']);
    expect(json.output_text).toBe('Now really done.');
    expect(json['loopgate:loop']).toEqual({ completion_check: { outcome: 'resumed_work' } });
  });

  it("the completion check also applies to a client's own tool loop, continued with its tools' outputs", async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }];
    model = (seen) => {
      if (results(seen).length === 0) return { calls: [{ id: 'w1', name: 'get_weather', args: {} }] };
      return seen.some((entry) => entry.kind === 'user' && entry.text.startsWith('Before I accept your answer')) ? { text: 'Sunny, confirmed.' } : { text: 'Sunny.' };
    };
    const paused = await client.responses.create({ model: flavor.model, input: 'Weather?', tools, 'loopgate:loop': { completion_check: true } } as any);
    expect(paused.status).toBe('requires_action');
    const answered = await client.responses.create({
      model: flavor.model,
      previous_response_id: paused.id,
      tools,
      input: [{ type: 'function_call_output', call_id: 'w1', output: 'sunny' }],
      'loopgate:loop': { completion_check: true },
    } as any);
    expect(answered.output_text).toBe('Sunny, confirmed.');
    expect(upstream.requests).toHaveLength(3);
  });

  it('the per-turn cap runs the first calls of a turn and tells the model about the rest', async () => {
    model = (seen) => (results(seen).length > 0 ? { text: results(seen).map((result) => result.content).join(' | ') } : { calls: [1, 2, 3].map((n) => ({ id: `p${n}`, name: 'tools__add', args: { a: n, b: n } })) });
    const { json } = await both({ input: 'Add', 'loopgate:loop': { max_tool_calls_per_turn: 2 } });
    expect(mcp.calls).toHaveLength(4);
    expect(json.output_text).toMatch(/^2 \| 4 \| .*at most 2 tool calls run per turn/);
  });

  it('requests cannot ask for more than the operator allows, and unknown switches are refused', async () => {
    const post = async (extension: unknown) => {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'x', 'loopgate:loop': extension }) });
      return { status: response.status, error: ((await response.json()) as any).error };
    };
    expect(await post({ max_turns: 7 })).toMatchObject({ status: 400, error: { param: 'loopgate:loop.max_turns', code: 'integer_above_max_value', type: 'invalid_request_error' } });
    expect(await post({ output_validation: { max_attempts: 4 } })).toMatchObject({ status: 400, error: { param: 'loopgate:loop.output_validation.max_attempts' } });
    const badSchema = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: flavor.model, input: 'x', text: { format: { type: 'json_schema', name: 'r', schema: { type: 'object', properties: { a: { type: 'nonsense' } } } } }, 'loopgate:loop': { output_validation: { max_attempts: 2 } } }),
    });
    expect(badSchema.status).toBe(400);
    expect(((await badSchema.json()) as any).error).toMatchObject({ param: 'text.format.schema', code: 'invalid_json_schema' });
    expect(await post({ turbo: true })).toMatchObject({ status: 400, error: { param: 'loopgate:loop.turbo', code: 'unknown_parameter' } });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('loop controls: an MCP tool as the output validator', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  const flavor = flavors[0]!;
  mcp.extraTools.push((server) =>
    server.registerTool('judge', { description: 'Judges an answer.', inputSchema: { answer: z.string(), text_format: z.any() } }, async ({ answer }) => ({
      content: [{ type: 'text', text: JSON.stringify(answer.includes('please') ? { valid: true } : { valid: false, errors: ['Say please.'] }) }],
    })),
  );

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    upstream.setScript((request) => flavor.render(request, { text: flavor.seen(request).some((entry) => entry.kind === 'user' && entry.text.includes('Say please.')) ? 'Yes, please.' : 'Yes.' }));
    gateway = await startGateway(upstreamUrl, {
      ...flavor.config(upstreamUrl),
      mcp: { callItems: 'function', servers: [{ name: 'checks', url: mcpUrl, allowedTools: ['judge'] }] },
      loop: { outputValidation: { enabled: true, validator: { type: 'mcp', tool: 'checks__judge' } } },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('judges the answer through the tool and sends its errors back to the model', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({ model: flavor.model, input: 'Agree?' });
    expect(response.output_text).toBe('Yes, please.');
    expect((response as any)['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
    expect(upstream.requests).toHaveLength(2);
  });
});
