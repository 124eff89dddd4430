import OpenAI from 'openai-v6';
import { zodTextFormat } from 'openai-v6/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertEventStreamInvariants } from '../../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { assertValidResponse } from '../../support/openresponses-schema.ts';
import { flavors, scriptModel, type ModelTurn, type ProviderFlavor } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

/** The names of the tools the gateway offered the model, in either upstream's wire format. */
const offeredTools = (flavor: ProviderFlavor, request: RecordedRequest): string[] => flavor.offeredTools(request).map((offered) => offered.name);

/** The JSON schema the upstream was told to answer in, in either upstream's wire format. */
const requestedSchema = (flavor: ProviderFlavor, request: RecordedRequest): any => {
  const format = flavor.format(request);
  return format?.type === 'json_schema' ? format.schema : undefined;
};

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
  beforeEach(() => {
    upstream.requests.length = 0;
    script(() => ({ text: 'v6 says hi' }));
  });

  it('responses.create: a schema-valid response; instructions and input reach the model', async () => {
    const created = await client.responses.create({ model: flavor.model, input: 'hi', instructions: 'Be kind.', metadata: { run: 'v6' } });
    assertValidResponse(created);
    expect(created).toMatchObject({ status: 'completed', model: flavor.model, instructions: 'Be kind.', metadata: { run: 'v6' } });
    expect(created.output_text).toBe('v6 says hi');
    expect(created.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    expect(created._request_id).toMatch(/^req_/);
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.requestedModel(upstream.requests[0]!)).toBe(flavor.model);
    expect(flavor.seen(upstream.requests[0]!)).toEqual([
      { kind: 'system', text: 'Be kind.' },
      { kind: 'user', text: 'hi' },
    ]);
  });

  it('responses.create({stream: true}): schema-valid events in order, the upstream streamed', async () => {
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: flavor.model, input: 'stream hi', stream: true })) events.push(event);
    const final = assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(final.status).toBe('completed');
    expect(final.output[0].content[0].text).toBe('v6 says hi');
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.streamed(upstream.requests[0]!)).toBe(true);
    expect(flavor.seen(upstream.requests[0]!)).toEqual([{ kind: 'user', text: 'stream hi' }]);
  });

  it('responses.stream() helper: text deltas, and finalResponse() is the streamed response', async () => {
    let deltas = '';
    const helper = client.responses.stream({ model: flavor.model, input: 'helper hi' });
    helper.on('response.output_text.delta', (event) => (deltas += event.delta));
    const events: any[] = [];
    for await (const event of helper) events.push(event);
    const final = await helper.finalResponse();
    assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(final.output_text).toBe('v6 says hi');
    expect(final.id).toBe(events[0].response.id);
    expect(deltas).toBe('v6 says hi');
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.streamed(upstream.requests[0]!)).toBe(true);
    expect(flavor.seen(upstream.requests[0]!)).toEqual([{ kind: 'user', text: 'helper hi' }]);
  });

  it('background: create, retrieve({stream, starting_after}) resumes, cancel of a finished one returns it, conversations', async () => {
    script(() => ({ text: 'v6 in the background' }));
    const queued = await client.responses.create({ model: flavor.model, input: 'hi', background: true });
    expect(queued.status).toBe('queued');
    const events = [];
    for await (const event of await client.responses.retrieve(queued.id, { stream: true, starting_after: 0 })) events.push(event);
    expect(events[0]!.sequence_number).toBe(1);
    expect(events.at(-1)!.type).toBe('response.completed');
    expect((await client.responses.cancel(queued.id)).status).toBe('completed');
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'I am v6.' }] });
    await client.responses.create({ model: flavor.model, input: 'Who am I?', conversation: conversation.id });
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((item) => item.type)).toEqual(['message', 'message', 'message']);
  });

  it('retrieve, inputItems.list and delete read the stored response without calling the model', async () => {
    const created = await client.responses.create({ model: flavor.model, input: 'remember me' });
    expect(upstream.requests).toHaveLength(1);

    const retrieved = await client.responses.retrieve(created.id);
    assertValidResponse(retrieved);
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.output_text).toBe('v6 says hi');
    const items = [];
    for await (const item of client.responses.inputItems.list(created.id)) items.push(item);
    expect(items).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [expect.objectContaining({ type: 'input_text', text: 'remember me' })] })]);

    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(upstream.requests).toHaveLength(1);
  });

  it('responses.parse with zodTextFormat: the schema reaches the model, output_parsed comes back', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Kyoto', celsius: 21 }) }));
    const parsed = await client.responses.parse({ model: flavor.model, input: 'weather', text: { format: zodTextFormat(z.object({ city: z.string(), celsius: z.number() }), 'weather') } });
    expect(parsed.output_parsed).toEqual({ city: 'Kyoto', celsius: 21 });
    expect(parsed.text?.format).toMatchObject({ type: 'json_schema', name: 'weather', strict: true });
    expect(upstream.requests).toHaveLength(1);
    const schema = requestedSchema(flavor, upstream.requests[0]!);
    expect(Object.keys(schema.properties)).toEqual(['city', 'celsius']);
    expect(schema.required).toEqual(['city', 'celsius']);
  });

  it.each([false, true])('a function tool continued with previous_response_id (streamed: %s)', async (streamed) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_v6', name: 'get_weather', args: { city: 'Rome' } }] } : { text: `Rome: ${results[0]}` }));
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const ask = async (body: { input: OpenAI.Responses.ResponseInput | string; previous_response_id?: string }): Promise<OpenAI.Responses.Response> => {
      if (!streamed) return client.responses.create({ model: flavor.model, tools, ...body });
      const helper = client.responses.stream({ model: flavor.model, tools, ...body });
      for await (const _event of helper) {
        // drained
      }
      return helper.finalResponse();
    };
    const asked = await ask({ input: 'Weather in Rome?' });
    assertValidResponse(asked);
    const call = asked.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ call_id: 'call_v6', name: 'get_weather', arguments: JSON.stringify({ city: 'Rome' }) });
    expect(offeredTools(flavor, upstream.requests[0]!)).toEqual(['get_weather']);

    const answered = await ask({ previous_response_id: asked.id, input: [{ type: 'function_call_output', call_id: 'call_v6', output: '25°C' }] });
    assertValidResponse(answered);
    expect(answered.output_text).toBe('Rome: 25°C');
    expect(answered.previous_response_id).toBe(asked.id);
    expect(upstream.requests).toHaveLength(2);
    expect(flavor.seen(upstream.requests[1]!)).toEqual([
      { kind: 'user', text: 'Weather in Rome?' },
      { kind: 'call', id: 'call_v6', name: 'get_weather', args: { city: 'Rome' } },
      { kind: 'result', id: 'call_v6', content: '25°C' },
    ]);
  });

  it('errors arrive as the SDK\'s classes with param and code, and never reach the model', async () => {
    const invalid = await client.responses.create({ model: flavor.model, input: 'x', temperature: 'hot' as unknown as number }).catch((caught) => caught);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect(invalid.status).toBe(400);
    expect(invalid.param).toBe('temperature');
    expect(invalid.code).toBe('invalid_value');
    expect(invalid.type).toBe('invalid_request_error');

    const unknown = await client.responses.create({ model: flavor.model, input: 'x', previous_response_id: 'resp_does_not_exist' }).catch((caught) => caught);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.param).toBe('previous_response_id');
    expect(unknown.code).toBe('previous_response_not_found');
    expect(upstream.requests).toHaveLength(0);
  });

  it.each([false, true])('an upstream refusing at once is the SDK\'s APIError with the gateway\'s status (streamed: %s)', async (streamed) => {
    const { reply, status } = flavor.failAtOnce();
    upstream.setScript(() => reply);
    const attempt = streamed
      ? client.responses.stream({ model: flavor.model, input: 'x' }).finalResponse()
      : client.responses.create({ model: flavor.model, input: 'x' });
    const error = await attempt.catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(status);
    expect(error.message).not.toContain('sk-');
    expect(upstream.requests).toHaveLength(1);
  });
});
