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
