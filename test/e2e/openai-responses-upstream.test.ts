import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiResponses } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-responses/${name}`, import.meta.url), 'utf8');
const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];

/**
 * What only the Responses API upstream does, through the official SDK: its
 * encrypted reasoning goes back to it on the next turn of a stored
 * conversation (the upstream itself stores nothing), and input token counts
 * use its own counting endpoint.
 */
describe('over an OpenAI Responses upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let reply: (request: RecordedRequest) => UpstreamReply = () => ({ kind: 'sse', pieces: [fixture('reasoning-then-tool.sse')] });
  let gateway: RunningGateway;
  let client: OpenAI;
  let url: string;

  beforeAll(async () => {
    url = await upstream.start();
    upstream.setScript((request) => reply(request));
    gateway = await startGateway(url, openaiResponses.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('reasoning streamed with its encrypted_content is sent back, untouched and without ids, when the conversation continues', async () => {
    reply = () => ({ kind: 'sse', pieces: [fixture('reasoning-then-tool.sse')] });
    const stream = await client.responses.create({ model: openaiResponses.model, input: 'Weather in Paris?', tools, reasoning: { effort: 'low' }, stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const first = assertEventStreamInvariants(events);
    expect(first.output.map((item: any) => item.type)).toEqual(['reasoning', 'function_call']);
    const encrypted = first.output[0].encrypted_content;
    expect(encrypted).toMatch(/^gAAAAAB/);
    expect(upstream.requests[0]!.body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'low' }, stream: true });

    reply = () => ({ kind: 'json', body: JSON.parse(fixture('reasoning-and-text.json')) });
    const second = await client.responses.create({ model: openaiResponses.model, previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C, clear' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('2 + 2 = 4.');
    expect(second.usage).toMatchObject({ output_tokens_details: { reasoning_tokens: 28 } });
    const sent = upstream.requests[1]!.body;
    expect(sent.stream).toBe(false);
    expect(sent.input).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Paris?' },
      { type: 'reasoning', summary: [], encrypted_content: encrypted },
      { type: 'function_call', call_id: 'call_Vx1mJ9rK2pLqA7', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C, clear' },
    ]);
  });

  it('reasoning the upstream cannot verify (minted under another key or organisation) is left out and the call made again, so the conversation goes on, streamed and not', async () => {
    reply = () => ({ kind: 'sse', pieces: [fixture('reasoning-then-tool.sse')] });
    const opening: any[] = [];
    for await (const event of await client.responses.create({ model: openaiResponses.model, input: 'Weather in Paris?', tools, reasoning: { effort: 'low' }, stream: true })) opening.push(event);
    const first = assertEventStreamInvariants(opening);
    expect(first.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^gAAAAAB/) });
    // As OpenAI answers a key of another organisation (the operator moved the deployment): a 400 before anything streams.
    const unverified = { error: { message: 'The encrypted content gAAA...c90= could not be verified.', type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } };
    const carriesReasoning = (request: RecordedRequest) => request.body.input.some((item: any) => item.type === 'reasoning');
    for (const stream of [false, true]) {
      upstream.requests.length = 0;
      reply = (request) => (carriesReasoning(request) ? { kind: 'json', status: 400, body: unverified } : stream ? { kind: 'sse', pieces: [fixture('text.sse')] } : { kind: 'json', body: JSON.parse(fixture('reasoning-and-text.json')) });
      const input = [{ type: 'function_call_output' as const, call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C, clear' }];
      let second: any;
      if (stream) {
        const events: any[] = [];
        for await (const event of await client.responses.create({ model: openaiResponses.model, previous_response_id: first.id, tools, input, stream: true })) events.push(event);
        second = assertEventStreamInvariants(events);
      } else {
        second = await client.responses.create({ model: openaiResponses.model, previous_response_id: first.id, tools, input });
        assertValidResponse(second);
      }
      expect(second.status).toBe('completed');
      expect(upstream.requests.map(carriesReasoning)).toEqual([true, false]);
      expect(upstream.requests[1]!.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_Vx1mJ9rK2pLqA7', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C, clear' },
      ]);
    }
    // Any other refusal is the client's, as it was: no second call.
    upstream.requests.length = 0;
    reply = () => ({ kind: 'json', status: 400, body: { error: { message: 'Invalid value for temperature.', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } } });
    const refused = await client.responses.create({ model: openaiResponses.model, previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C' }] }).catch((error) => error);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_value' });
    expect(upstream.requests).toHaveLength(1);
  });

  it('with upstreamStore, reasoning still goes back: its encrypted_content is asked for, as the gateway keeps no upstream item ids to name it by', async () => {
    const storing = await startGateway(url, { providers: { responses: { type: 'openai-responses', baseUrl: url, apiKey: 'sk-test', upstreamStore: true } }, defaultProvider: 'responses' });
    try {
      // As OpenAI does: encrypted reasoning only when the request includes it.
      const asked = (request: RecordedRequest, text: string) => ((request.body.include ?? []).includes('reasoning.encrypted_content') ? text : text.replace(/,?"encrypted_content":"[^"]*"/g, ''));
      reply = (request) => ({ kind: 'sse', pieces: [asked(request, fixture('reasoning-then-tool.sse'))] });
      const storingClient = new OpenAI({ baseURL: storing.baseURL, apiKey: 'k', maxRetries: 0 });
      const events: any[] = [];
      for await (const event of await storingClient.responses.create({ model: openaiResponses.model, input: 'Weather in Paris?', tools, reasoning: { effort: 'low' }, stream: true })) events.push(event);
      const first = assertEventStreamInvariants(events);
      expect(upstream.requests[0]!.body).toMatchObject({ store: true, include: ['reasoning.encrypted_content'] });
      const encrypted = first.output[0].encrypted_content;
      expect(encrypted).toMatch(/^gAAAAAB/);

      reply = () => ({ kind: 'json', body: JSON.parse(fixture('reasoning-and-text.json')) });
      const second = await storingClient.responses.create({ model: openaiResponses.model, previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: 'call_Vx1mJ9rK2pLqA7', output: '18°C, clear' }] });
      assertValidResponse(second);
      expect(upstream.requests[1]!.body.input).toContainEqual({ type: 'reasoning', summary: [], encrypted_content: encrypted });
    } finally {
      await storing.close();
    }
  });

  it('a stream that fails after its answer began is charged the usage its response.failed reports (on the response and in /v1/usage)', async () => {
    const frame = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
    const body = { id: 'resp_up', object: 'response', model: openaiResponses.model, status: 'in_progress', output: [] };
    const message = { id: 'msg_up', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    reply = () => ({
      kind: 'sse',
      pieces: [
        frame({ type: 'response.created', sequence_number: 0, response: body }),
        frame({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: message }),
        frame({ type: 'response.output_text.delta', sequence_number: 2, item_id: 'msg_up', output_index: 0, content_index: 0, delta: 'Partial answer' }),
        frame({ type: 'response.failed', sequence_number: 3, response: { ...body, status: 'failed', error: { code: 'server_error', message: 'The model broke down.' }, usage: { input_tokens: 100, output_tokens: 50, total_tokens: 150, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } }),
      ],
    });
    const today = new Date().toISOString().slice(0, 10);
    const before = await (await fetch(`${gateway.baseURL}/usage?start=${today}`)).json();
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: openaiResponses.model, input: 'x', stream: true })) events.push(event);
    const failed = assertEventStreamInvariants(events);
    expect(failed.status).toBe('failed');
    expect(failed.usage).toMatchObject({ input_tokens: 100, output_tokens: 50, total_tokens: 150 });
    const after = await (await fetch(`${gateway.baseURL}/usage?start=${today}`)).json();
    const tokens = (usage: any, field: string) => usage.data.reduce((sum: number, row: any) => sum + row[field], 0);
    expect(tokens(after, 'input_tokens') - tokens(before, 'input_tokens')).toBe(100);
    expect(tokens(after, 'output_tokens') - tokens(before, 'output_tokens')).toBe(50);
  });

  it('two reasoning items in one answer stay two, streamed and not, also without encrypted content', async () => {
    const frame = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
    const reasoning = (id: string, text: string) => ({ id, type: 'reasoning', summary: [{ type: 'summary_text', text }] });
    const message = { id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
    const usage = { input_tokens: 5, output_tokens: 5, total_tokens: 10 };
    const done = { id: 'resp_up', object: 'response', model: openaiResponses.model, status: 'completed', output: [reasoning('rs_1', 'A.'), reasoning('rs_2', 'B.'), message], usage };
    let sequence = 0;
    const next = (data: Record<string, unknown>) => frame({ ...data, sequence_number: sequence++ });
    const streamed = (index: number, id: string, text: string) => [
      next({ type: 'response.output_item.added', output_index: index, item: { id, type: 'reasoning', summary: [] } }),
      next({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } }),
      next({ type: 'response.reasoning_summary_text.delta', item_id: id, output_index: index, summary_index: 0, delta: text }),
      next({ type: 'response.output_item.done', output_index: index, item: reasoning(id, text) }),
    ];
    reply = () => ({ kind: 'sse', pieces: [next({ type: 'response.created', response: { ...done, status: 'in_progress', output: [] } }), ...streamed(0, 'rs_1', 'A.'), ...streamed(1, 'rs_2', 'B.'), next({ type: 'response.output_item.added', output_index: 2, item: { ...message, content: [] } }), next({ type: 'response.output_text.delta', item_id: 'msg_up', output_index: 2, content_index: 0, delta: 'Done.' }), next({ type: 'response.output_item.done', output_index: 2, item: message }), next({ type: 'response.completed', response: done })] });
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: openaiResponses.model, input: 'x', stream: true })) events.push(event);
    const summaries = (response: any) => response.output.filter((item: any) => item.type === 'reasoning').map((item: any) => [...item.summary, ...(item.content ?? [])].map((part: any) => part.text).join(''));
    expect(summaries(assertEventStreamInvariants(events))).toEqual(['A.', 'B.']);

    reply = () => ({ kind: 'json', body: done });
    const json = await client.responses.create({ model: openaiResponses.model, input: 'x' });
    assertValidResponse(json);
    expect(summaries(json)).toEqual(['A.', 'B.']);
  });

  it('a message in several output_text parts is one text whose citations still point at their own words (offsets counted from the joined text), streamed and not', async () => {
    const frame = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
    const citation = { type: 'url_citation', url: 'https://example.com/hello', title: 'Hello', start_index: 0, end_index: 5 };
    const parts = [{ type: 'output_text', text: 'First part. ', annotations: [] }, { type: 'output_text', text: 'Hello world', annotations: [citation] }];
    const message = { id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: parts };
    const done = { id: 'resp_up', object: 'response', model: openaiResponses.model, status: 'completed', output: [message], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } };
    const cited = (response: any) => {
      const content = response.output.find((item: any) => item.type === 'message').content;
      const text = content.map((part: any) => part.text).join('');
      return content.flatMap((part: any, index: number) => part.annotations.map((annotation: any) => {
        const before = content.slice(0, index).map((earlier: any) => earlier.text.length).reduce((sum: number, length: number) => sum + length, 0);
        return text.slice(before + annotation.start_index, before + annotation.end_index);
      }));
    };
    reply = () => ({ kind: 'json', body: done });
    const json = await client.responses.create({ model: openaiResponses.model, input: 'x' });
    assertValidResponse(json);
    expect(cited(json)).toEqual(['Hello']);

    let sequence = 0;
    const next = (data: Record<string, unknown>) => frame({ ...data, sequence_number: sequence++ });
    reply = () => ({
      kind: 'sse',
      pieces: [
        next({ type: 'response.created', response: { ...done, status: 'in_progress', output: [] } }),
        next({ type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } }),
        next({ type: 'response.output_text.delta', item_id: 'msg_up', output_index: 0, content_index: 0, delta: 'First part. ' }),
        next({ type: 'response.output_text.delta', item_id: 'msg_up', output_index: 0, content_index: 1, delta: 'Hello world' }),
        next({ type: 'response.output_text.annotation.added', item_id: 'msg_up', output_index: 0, content_index: 1, annotation_index: 0, annotation: citation }),
        next({ type: 'response.output_item.done', output_index: 0, item: message }),
        next({ type: 'response.completed', response: done }),
      ],
    });
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: openaiResponses.model, input: 'x', stream: true })) events.push(event);
    expect(cited(assertEventStreamInvariants(events))).toEqual(['Hello']);
  });

  it('output items of a kind the gateway cannot pass on, beside an answer, are left out with a warn line naming them', async () => {
    const lines: Record<string, any>[] = [];
    const logged = await startGateway(url, { ...openaiResponses.config(url), logLevel: 'warn' }, {}, [], { write: (line: string) => lines.push(JSON.parse(line)) });
    try {
      const message = { id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
      reply = () => ({ kind: 'json', body: { id: 'resp_up', object: 'response', model: openaiResponses.model, status: 'completed', output: [{ id: 'fi_1', type: 'future_item', payload: 1 }, message], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } } });
      const response = await new OpenAI({ baseURL: logged.baseURL, apiKey: 'k', maxRetries: 0 }).responses.create({ model: openaiResponses.model, input: 'x' });
      assertValidResponse(response);
      expect(response.output.map((item) => item.type)).toEqual(['message']);
      expect(lines).toContainEqual(expect.objectContaining({ level: 40, provider: 'responses', item_types: ['future_item'], msg: expect.stringMatching(/left out/) }));
    } finally {
      await logged.close();
    }
  });

  it('the tier the upstream says it served at is the response\'s service_tier (JSON, and streamed where response.completed says it)', async () => {
    reply = () => ({ kind: 'json', body: { ...JSON.parse(fixture('reasoning-and-text.json')), service_tier: 'priority' } });
    const json = await client.responses.create({ model: openaiResponses.model, input: 'x', service_tier: 'auto' });
    assertValidResponse(json);
    expect(json.service_tier).toBe('priority');
    reply = () => ({ kind: 'sse', pieces: [fixture('reasoning-then-tool.sse').replace('"type":"response.completed","sequence_number":23,"response":{', '"type":"response.completed","sequence_number":23,"response":{"service_tier":"flex",')] });
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: openaiResponses.model, input: 'x', tools, service_tier: 'auto', stream: true })) events.push(event);
    expect(events[0].response.service_tier).toBe('auto');
    expect(assertEventStreamInvariants(events).service_tier).toBe('flex');
  });

  it('input token counts are the upstream\'s own, sent only the fields its counting endpoint takes', async () => {
    reply = (request) => (request.path.endsWith('/responses/input_tokens') ? { kind: 'json', body: { object: 'response.input_tokens', input_tokens: 77 } } : { kind: 'json', status: 500, body: {} });
    const counted = await client.responses.inputTokens.count({ model: openaiResponses.model, instructions: 'Be brief.', input: 'Weather?', tools });
    expect(counted).toMatchObject({ object: 'response.input_tokens', input_tokens: 77 });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.path).toBe('/v1/responses/input_tokens');
    expect(upstream.requests[0]!.body).toEqual({
      model: 'gpt-responses-test',
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.parameters, strict: false }],
    });
  });
});
