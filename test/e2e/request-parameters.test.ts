import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidEvent, assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion } from '../support/scripted-chat-upstream.ts';

/** What OpenAI's API accepts is accepted; what the gateway cannot serve is a 400 that names it; nothing is dropped silently. */
describe('request parameters', () => {
  const upstream = new ScriptedChatUpstream(() => textCompletion('ok'));
  let gateway: RunningGateway;
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', ...body }) });
    const answer = { status: response.status, body: (await response.json()) as any };
    if (answer.status === 200) assertValidResponse(answer.body);
    return answer;
  };
  const refused = async (body: Record<string, unknown>, expected: { param: string; code: string; mentions: string }) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    assertErrorEnvelope(answer);
    expect(answer.error).toMatchObject({ param: expected.param, code: expected.code });
    expect(answer.error.message).toContain(expected.mentions);
  };
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('nullable fields take null, as openai-node types them (LangChain sends strict: null)', async () => {
    const { status } = await post({
      tools: [{ type: 'function', name: 'f', description: null, parameters: null, strict: null }],
      include: null,
      stream: null,
      store: null,
      background: null,
      truncation: null,
      service_tier: null,
      text: { format: null, verbosity: null },
      conversation: null,
      prompt: null,
    });
    expect(status).toBe(200);
    expect(upstream.requests.at(-1)!.body.tools[0].function).not.toHaveProperty('strict');
  });

  it('a JSON answer is byte for byte what the store keeps and hands back, as JSON', async () => {
    const created = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Grüße "quoted" \u2028', metadata: { emoji: '🚀' } }) });
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await created.text();
    expect(Number(created.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const body = JSON.parse(text);
    assertValidResponse(body);
    const stored = await fetch(`${gateway.baseURL}/responses/${body.id}`);
    expect(await stored.text()).toBe(text);
  });

  it('parameters that cannot change the answer are accepted and ignored; every includable value is accepted', async () => {
    const { status } = await post({ user: 'u-1', client_metadata: { originator: 'codex' }, prompt_cache_retention: '24h', include: ['reasoning.encrypted_content', 'web_search_call.action.sources', 'file_search_call.results'] });
    expect(status).toBe(200);
  });

  it('parameters OpenAI defines but the gateway does not serve are 400s naming them', async () => {
    await refused({ prompt: { id: 'pmpt_1' } }, { param: 'prompt', code: 'unsupported_parameter', mentions: 'prompt' });
    await refused({ context_management: [{ type: 'compaction' }] }, { param: 'context_management', code: 'unsupported_parameter', mentions: 'context_management' });
    // Warming the upstream's cache would need a model call that answers nothing.
    await refused({ prompt_cache_options: { prewarm: true } }, { param: 'prompt_cache_options.prewarm', code: 'unsupported_parameter', mentions: 'without generating output' });
  });

  it('generate: false prepares the state without a model call: a completed response with no output, which a later request continues with only what is new', async () => {
    const before = upstream.requests.length;
    const { status, body: prepared } = await post({ input: [{ role: 'developer', content: 'Answer in French.' }], generate: false, 'loopgate:loop': { output_validation: { max_attempts: 2 } }, text: { format: { type: 'json_object' } } });
    expect(status).toBe(200);
    expect(prepared).toMatchObject({ status: 'completed', output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
    expect(upstream.requests.length, 'no model call').toBe(before);
    const { status: continued } = await post({ previous_response_id: prepared.id, input: 'Hello.' });
    expect(continued).toBe(200);
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)!.body.messages.map((message: any) => [message.role, message.content])).toEqual([
      ['developer', 'Answer in French.'],
      ['user', 'Hello.'],
    ]);
    // Streamed, the events are those of any response that ends at once.
    const events = await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', generate: false, stream: true }) })).text();
    const types = events.split('\n').filter((line) => line.startsWith('event: ')).map((line) => line.slice(7));
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    for (const data of events.split('\n').filter((line) => line.startsWith('data: {'))) assertValidEvent(JSON.parse(data.slice(6)));
  });

  it("OpenAI's generate: true (the default) and prompt_cache_options are taken, where generate was an unknown parameter", async () => {
    expect((await post({ generate: true })).status).toBe(200);
    expect((await post({ prompt_cache_options: { mode: 'explicit', ttl: '12h', prewarm: false, comparison_response_id: 'resp_earlier' } })).status).toBe(200);
    await refused({ prompt_cache_options: { ttl: '1y' } }, { param: 'prompt_cache_options.ttl', code: 'invalid_value', mentions: '"30m", "12h"' });
  });

  it("OpenAI's newer service tiers (fast, ultrafast) are passed on and echoed, where they were a 400", async () => {
    for (const tier of ['fast', 'ultrafast']) {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', service_tier: tier }) });
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).service_tier).toBe(tier);
      expect(upstream.requests.at(-1)!.body.service_tier).toBe(tier);
    }
  });

  it('the response reports the tier the upstream says it served at, which may differ from the one asked for (JSON and streamed)', async () => {
    upstream.setScript((request) =>
      request.body.stream
        ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'ok' }, null, { service_tier: 'flex' }), chunk({}, 'stop', { service_tier: 'flex' })]) }
        : { kind: 'json', body: { ...(textCompletion('ok') as { body: Record<string, unknown> }).body, service_tier: 'priority' } },
    );
    try {
      const json = await post({ service_tier: 'auto' });
      expect(json.body.service_tier).toBe('priority');
      const streamed = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream: true }) });
      const events = (await streamed.text()).split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)));
      for (const event of events) assertValidEvent(event);
      expect(events[0].response.service_tier).toBe('default');
      expect(events.at(-1).response.service_tier).toBe('flex');
      // An upstream that says nothing of it (most servers): the tier asked for, as before.
      upstream.setScript(() => textCompletion('ok'));
      expect((await post({ service_tier: 'flex' })).body.service_tier).toBe('flex');
    } finally {
      upstream.setScript(() => textCompletion('ok'));
    }
  });

  it('a parameter nobody defines is a 400 unknown_parameter, as OpenAI answers', async () => {
    await refused({ temprature: 0.2 }, { param: 'temprature', code: 'unknown_parameter', mentions: "'temprature'" });
  });

  it('a tool or item kind the gateway does not implement is a 400 naming it on its type', async () => {
    await refused({ tools: [{ type: 'teleport' }] }, { param: 'tools[0].type', code: 'unsupported_type', mentions: "'teleport'" });
    await refused({ input: [{ type: 'computer_call_output', call_id: 'c', output: {} }] }, { param: 'input[0].type', code: 'unsupported_type', mentions: "'computer_call_output'" });
  });
});
