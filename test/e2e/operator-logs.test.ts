import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model that calls `lookup` while it has seen fewer than `calls` results, then answers. */
function callsThenAnswers(calls: number): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool').length;
    if (results >= calls) return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 7, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 2 } } } };
    const call = { id: `call_${results}`, type: 'function', function: { name: 'lookup', arguments: '{}' } };
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 1 } } };
  };
}

/** What an operator reads: one line per response, quiet probes, disconnects without alarm. */
describe('logs for operators', () => {
  const upstream = new ScriptedChatUpstream();
  const lines: Record<string, any>[] = [];
  let gateway: RunningGateway;
  let client: OpenAI;
  const lookup = new MockExecutor(['lookup'], async () => ({ output: 'found', isError: false }));
  const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object' }, strict: false }, { type: 'function' as const, name: 'ask_user', parameters: { type: 'object' }, strict: false }];
  const responseLines = () => lines.filter((line) => line.msg === 'response finished');

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { logLevel: 'info', loop: { maxTurns: 3 } }, {}, [lookup], { write: (line) => lines.push(JSON.parse(line)) });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    lines.length = 0;
  });

  it('completed: one info line with ids, model, provider, turns, tool calls, tokens and timings; nothing else at info for the request', async () => {
    upstream.setScript(callsThenAnswers(2));
    const response = await client.responses.create({ model: 'm', input: 'x', tools });
    const [line, ...more] = responseLines();
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 30,
      response_id: response.id,
      request_id: response._request_id,
      tenant: 'default',
      model: 'm',
      upstream_model: 'm',
      provider: 'openai',
      status: 'completed',
      stream: false,
      turns: 3,
      tool_calls: 2,
      failed_tool_calls: 0,
      input_tokens: 17,
      output_tokens: 5,
      cached_tokens: 2,
    });
    expect(line!.duration_ms).toBeGreaterThanOrEqual(line!.ttfb_ms);
    expect(lines.filter((entry) => entry.request_id === response._request_id && entry.level >= 30)).toEqual([line]);
  });

  it("a call the gateway answered without running it (no such tool) counts as a failed tool call, as the client's output shows it", async () => {
    upstream.setScript((request) => {
      const answered = (request.body.messages as any[]).some((message) => message.role === 'tool');
      if (answered) return textCompletion('gave up');
      return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'no_such_tool', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } };
    });
    const response = await client.responses.create({ model: 'm', input: 'x', tools: [tools[0]!] });
    expect(response.output_text).toBe('gave up');
    expect(responseLines()[0]).toMatchObject({ status: 'completed', turns: 2, tool_calls: 1, failed_tool_calls: 1 });
  });

  it("a background response's line (the one saying how it ended) carries the request id of the request that created it", async () => {
    // A background response streams from its upstream.
    upstream.setScript(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'done' }), chunk({}, 'stop'), usageChunk(3, 1)]) }));
    const queued = await client.responses.create({ model: 'm', input: 'x', background: true }, { headers: { 'x-request-id': 'bg-request-7' } });
    await waitFor(async () => (await client.responses.retrieve(queued.id)).status === 'completed');
    await waitFor(() => lines.some((line) => line.msg === 'background response finished'));
    expect(lines.filter((line) => line.msg === 'background response finished')).toEqual([expect.objectContaining({ request_id: 'bg-request-7', response_id: queued.id, status: 'completed' })]);
  });

  it('requires_action, incomplete (max turns) and failed (upstream error mid-loop) say how they ended', async () => {
    upstream.setScript((request) => ({ kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_u', type: 'function', function: { name: 'ask_user', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } }));
    await client.responses.create({ model: 'm', input: 'x', tools });
    upstream.setScript(callsThenAnswers(10));
    await client.responses.create({ model: 'm', input: 'x', tools });
    let turn = 0;
    upstream.setScript((request) => (++turn === 1 ? callsThenAnswers(1)(request) : { kind: 'json', status: 500, body: { error: { message: 'boom' } } }));
    await client.responses.create({ model: 'm', input: 'x', tools });
    expect(responseLines().map((line) => [line.status, line.reason ?? line.error_code ?? null])).toEqual([
      ['requires_action', null],
      ['incomplete', 'max_turns'],
      ['failed', 'upstream_error'],
    ]);
  });

  it('a client that leaves mid-stream: one info line without a stack, the response ends cancelled, stored and logged', async () => {
    upstream.setScript(() => ({ kind: 'sse', pauseMs: 80, pieces: sse([chunk({ role: 'assistant', content: '' }), ...'abcdefghijklmnop'.split('').map((char) => chunk({ content: char })), chunk({}, 'stop'), usageChunk(3, 16)]) }));
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream: true }), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await sleep(600);
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    expect(lines.filter((line) => line.err || line.stack)).toEqual([]);
    const left = lines.filter((line) => /client disconnected/.test(line.msg));
    expect(left).toHaveLength(1);
    expect(left[0]!.level).toBe(30);
    const [line] = responseLines();
    // Its one model call was cut off, but made: a turn all the same.
    expect(line).toMatchObject({ status: 'cancelled', reason: 'cancelled', stream: true, turns: 1 });
    const stored = (await (await fetch(`${gateway.baseURL}/responses/${line!.response_id}`)).json()) as any;
    expect(stored.status).toBe('cancelled');
  });

  for (const stream of [false, true]) {
    // A JSON request's whole generation is its first model call: a client giving up on it must not lose the response (README: "the response still ends (status `cancelled`) and is stored").
    it(`a client that leaves before the upstream answered: nothing at error, the response ends cancelled, stored and logged (stream: ${stream})`, async () => {
      upstream.setScript(() => ({ kind: 'hang' }));
      const controller = new AbortController();
      const pending = fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream }), signal: controller.signal }).catch(() => null);
      await sleep(200);
      controller.abort();
      await pending;
      await waitFor(() => responseLines().length > 0, 3_000);
      expect(lines.filter((line) => line.level >= 40)).toEqual([]);
      const [line] = responseLines();
      expect(line).toMatchObject({ status: 'cancelled', reason: 'cancelled', stream, turns: 1 });
      const stored = (await (await fetch(`${gateway.baseURL}/responses/${line!.response_id}`)).json()) as any;
      assertValidResponse(stored);
      expect(stored).toMatchObject({ status: 'cancelled', incomplete_details: { reason: 'cancelled' }, output: [] });
    });
  }

  it('a refused request is one line with its method, path, status, code and duration (and tenant and model when the upstream refused); probes write nothing at info', async () => {
    const bad = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', temperature: 'hot' }) });
    expect(bad.status).toBe(400);
    const requestId = bad.headers.get('x-request-id');
    expect(lines.filter((line) => line.request_id === requestId && line.level >= 30)).toEqual([
      expect.objectContaining({ level: 30, method: 'POST', url: '/v1/responses', status: 400, code: 'invalid_value', param: 'temperature', duration_ms: expect.any(Number) }),
    ]);

    // Failed before the response started (the upstream refused at once): no response line, so the refusal says whose request it was.
    upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'boom' } } }));
    const failed = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream: true }) });
    expect(failed.status).toBe(502);
    expect(lines.filter((line) => line.request_id === failed.headers.get('x-request-id') && line.level >= 30)).toEqual([
      expect.objectContaining({ level: 40, method: 'POST', url: '/v1/responses', status: 502, code: 'upstream_error', tenant: 'default', model: 'm', stream: true }),
    ]);

    // Any route: a refusal is the request's one line.
    const badQuery = await fetch(`${gateway.baseURL}/responses/resp_x/input_items?limit=abc`);
    expect(badQuery.status).toBe(400);
    expect(lines.filter((line) => line.request_id === badQuery.headers.get('x-request-id') && line.level >= 30)).toEqual([
      expect.objectContaining({ level: 30, method: 'GET', url: '/v1/responses/resp_x/input_items?limit=abc', status: 400, param: 'limit' }),
    ]);

    lines.length = 0;
    for (let index = 0; index < 3; index++) {
      await fetch(`${gateway.origin}/healthz`);
      await fetch(`${gateway.origin}/readyz`);
    }
    expect(lines).toEqual([]);

    upstream.setScript(() => textCompletion('ok'));
    await fetch(`${gateway.baseURL}/models`);
    expect(lines.filter((line) => line.level >= 30)).toEqual([expect.objectContaining({ msg: 'request completed', method: 'GET', url: '/v1/models', status: 200 })]);
  });
});
