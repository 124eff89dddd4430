import OpenAI from 'openai-v6';
import { zodTextFormat } from 'openai-v6/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertEventStreamInvariants } from '../../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { assertValidResponse } from '../../support/openresponses-schema.ts';
import { flavors, scriptModel, type ModelTurn } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

/** openai v6 — still the most installed major — beside v7 (test/e2e/openai-sdk.test.ts), over each upstream. */
describe.each(flavors)('openai v6 over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let client: OpenAI;
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('create, create({stream}), stream() helper, retrieve, inputItems.list, delete', async () => {
    script(() => ({ text: 'v6 says hi' }));
    const created = await client.responses.create({ model: flavor.model, input: 'hi' });
    assertValidResponse(created);
    expect(created.output_text).toBe('v6 says hi');

    const events: any[] = [];
    for await (const event of await client.responses.create({ model: flavor.model, input: 'hi', stream: true })) events.push(event);
    expect(assertEventStreamInvariants(events).status).toBe('completed');

    let deltas = '';
    const helper = client.responses.stream({ model: flavor.model, input: 'hi' });
    helper.on('response.output_text.delta', (event) => (deltas += event.delta));
    const final = await helper.finalResponse();
    expect(final.output_text).toBe('v6 says hi');
    expect(deltas).toBe('v6 says hi');

    expect((await client.responses.retrieve(created.id)).output_text).toBe('v6 says hi');
    const items = [];
    for await (const item of client.responses.inputItems.list(created.id)) items.push(item);
    expect(items).toEqual([expect.objectContaining({ type: 'message', role: 'user' })]);
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('parse with zodTextFormat', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Kyoto', celsius: 21 }) }));
    const parsed = await client.responses.parse({ model: flavor.model, input: 'weather', text: { format: zodTextFormat(z.object({ city: z.string(), celsius: z.number() }), 'weather') } });
    expect(parsed.output_parsed).toEqual({ city: 'Kyoto', celsius: 21 });
  });

  it('a function tool continued with previous_response_id', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_v6', name: 'get_weather', args: { city: 'Rome' } }] } : { text: `Rome: ${results[0]}` }));
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const asked = await client.responses.create({ model: flavor.model, input: 'Weather in Rome?', tools });
    const call = asked.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ call_id: 'call_v6', name: 'get_weather' });
    const answered = await client.responses.create({ model: flavor.model, tools, previous_response_id: asked.id, input: [{ type: 'function_call_output', call_id: 'call_v6', output: '25°C' }] });
    expect(answered.output_text).toBe('Rome: 25°C');
  });

  it('errors arrive as the SDK\'s classes with param and code', async () => {
    const error = await client.responses.create({ model: flavor.model, input: 'x', temperature: 'hot' as unknown as number }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('temperature');
    expect(error.code).toBe('invalid_value');
  });
});
