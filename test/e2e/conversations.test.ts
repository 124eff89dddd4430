import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidItem, assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { fixture, ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** previous_response_id, item references and the stored-response endpoints, over both stores. */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`conversations on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    let redis: TestRedis | null = null;
    let gateway: RunningGateway;
    let client: OpenAI;

    beforeAll(async () => {
      const upstreamUrl = await upstream.start();
      if (storeKind === 'redis') redis = await acquireRedis();
      gateway = await startGateway(upstreamUrl, redis ? { store: { redisUrl: redis.url, keyPrefix: redis.prefix() } } : {});
      client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    });
    afterAll(async () => {
      await gateway.close();
      await upstream.close();
      await redis?.cleanup();
      await redis?.stop();
    });
    beforeEach(() => {
      upstream.requests.length = 0;
      upstream.setScript(textReply('ok'));
    });

    it('previous_response_id: the model sees earlier input, then output, then the new input; instructions are not inherited', async () => {
      upstream.setScript(textReply('Paris.'));
      const first = await client.responses.create({ model: 'm', instructions: 'Answer briefly.', input: 'Capital of France?' });
      upstream.setScript(textReply('About 2.1 million.'));
      const second = await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'Population?' });
      upstream.setScript(textReply('Seine.'));
      const third = await client.responses.create({ model: 'm', previous_response_id: second.id, instructions: 'Be terse.', input: [{ role: 'user', content: 'River?' }] });
      assertValidResponse(third);
      expect(third.previous_response_id).toBe(second.id);
      expect(upstream.requests[2]!.body.messages).toEqual([
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris.' },
        { role: 'user', content: 'Population?' },
        { role: 'assistant', content: 'About 2.1 million.' },
        { role: 'user', content: 'River?' },
      ]);
      expect(upstream.requests[1]!.body.messages[0]).toEqual({ role: 'user', content: 'Capital of France?' });
    });

    it('continuing a response that ended in function calls with function_call_output', async () => {
      upstream.setScript(() => ({ kind: 'sse', pieces: [fixture('openai-parallel-tool-calls.sse')] }));
      const tools = [
        { type: 'function' as const, name: 'get_weather', parameters: { type: 'object' }, strict: false },
        { type: 'function' as const, name: 'get_time', parameters: { type: 'object' }, strict: false },
      ];
      const stream = client.responses.stream({ model: 'm', input: 'Weather and time?', tools });
      const calls = (await stream.finalResponse()).output.filter((item) => item.type === 'function_call');
      const responseId = (await stream.finalResponse()).id;
      upstream.setScript(textReply('Sunny, 14:00.'));
      const next = await client.responses.create({
        model: 'm',
        previous_response_id: responseId,
        tools,
        input: calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: `result of ${call.name}` })),
      });
      expect(next.output_text).toBe('Sunny, 14:00.');
      expect(upstream.requests.at(-1)!.body.messages).toEqual([
        { role: 'user', content: 'Weather and time?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_Vx1mJ9rK2pLq', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
            { id: 'call_Hn4tB8wQ0zYc', type: 'function', function: { name: 'get_time', arguments: '{"zone": "Europe/Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_Vx1mJ9rK2pLq', content: 'result of get_weather' },
        { role: 'tool', tool_call_id: 'call_Hn4tB8wQ0zYc', content: 'result of get_time' },
      ]);
    });

    it('item_reference resolves to stored input and output items', async () => {
      upstream.setScript(textReply('Blue.'));
      const first = await client.responses.create({ model: 'm', input: [{ type: 'message', role: 'user', content: 'Favourite colour?', id: 'msg_client_1' } as OpenAI.Responses.ResponseInputItem] });
      const outputId = first.output[0]!.id;
      await client.responses.create({ model: 'm', input: [{ type: 'item_reference', id: 'msg_client_1' }, { type: 'item_reference', id: outputId! }, { role: 'user', content: 'Why?' }] });
      expect(upstream.requests.at(-1)!.body.messages).toEqual([
        { role: 'user', content: 'Favourite colour?' },
        { role: 'assistant', content: 'Blue.' },
        { role: 'user', content: 'Why?' },
      ]);
      // The referring response holds the items now too; deleted, it leaves them to the first, which still holds them (the AI SDK refers back so).
      const again = await client.responses.create({ model: 'm', input: [{ type: 'item_reference', id: outputId! }, { role: 'user', content: 'Sure?' }] });
      assertValidResponse(again);
      await client.responses.delete(again.id);
      await client.responses.create({ model: 'm', input: [{ type: 'item_reference', id: 'msg_client_1' }, { type: 'item_reference', id: outputId! }, { role: 'user', content: 'Really?' }] });
      expect(upstream.requests.at(-1)!.body.messages).toEqual([
        { role: 'user', content: 'Favourite colour?' },
        { role: 'assistant', content: 'Blue.' },
        { role: 'user', content: 'Really?' },
      ]);
      const missing = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_nope' }] }) });
      const body: any = await missing.json();
      expect(missing.status).toBe(404);
      expect(body.error).toMatchObject({ code: 'item_not_found', param: 'input[1].id' });
    });

    it('GET /v1/responses/{id} returns what was streamed; the stream ended only after it was stored', async () => {
      const stream = client.responses.stream({ model: 'm', input: 'hello' });
      let fetchedAtTerminal: unknown = null;
      const events: any[] = [];
      for await (const event of stream) {
        events.push(event);
        if (event.type === 'response.completed') fetchedAtTerminal = await client.responses.retrieve(event.response.id);
      }
      const final = assertEventStreamInvariants(events);
      assertValidResponse(fetchedAtTerminal);
      expect(fetchedAtTerminal).toMatchObject({ id: final.id, status: 'completed', output: final.output });
      const withInclude = await client.responses.retrieve(final.id, { include: ['message.output_text.logprobs'] });
      expect(withInclude.id).toBe(final.id);
    });

    it('every include value the SDK types allow is taken when reading back, as on create', async () => {
      const every: OpenAI.Responses.ResponseIncludable[] = ['reasoning.encrypted_content', 'message.output_text.logprobs', 'message.input_image.image_url', 'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs'];
      const created = await client.responses.create({ model: 'm', input: 'hello', include: every });
      expect((await client.responses.retrieve(created.id, { include: every })).id).toBe(created.id);
      const items = await client.responses.inputItems.list(created.id, { include: every });
      expect(items.data.map((item) => item.type)).toEqual(['message']);
      const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'hi' }] });
      expect((await client.conversations.items.list(conversation.id, { include: every })).data).toHaveLength(1);
    });

    it('store: false responses are never written and cannot be fetched or continued', async () => {
      const response = await client.responses.create({ model: 'm', input: 'secret', store: false });
      expect((response as unknown as { store: boolean }).store).toBe(false);
      await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const error = await client.responses.create({ model: 'm', input: 'x', previous_response_id: response.id }).catch((caught) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe('previous_response_not_found');
      expect(error.param).toBe('previous_response_id');
    });

    it('DELETE answers response.deleted, then 404 for get, delete and continue', async () => {
      const response = await client.responses.create({ model: 'm', input: 'to delete' });
      const raw = await fetch(`${gateway.baseURL}/responses/${response.id}`, { method: 'DELETE' });
      expect(await raw.json()).toEqual({ id: response.id, object: 'response.deleted', deleted: true });
      await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.responses.delete(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.responses.create({ model: 'm', input: 'x', previous_response_id: response.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('input_items: the SDK auto-paginates every item, newest first by default; asc, limit, after and before work', async () => {
      const input = Array.from({ length: 45 }, (_, index) => ({ role: 'user' as const, content: `message ${index}` }));
      const response = await client.responses.create({ model: 'm', input });
      const seen: string[] = [];
      for await (const item of client.responses.inputItems.list(response.id, { limit: 10 })) {
        expect(item.type).toBe('message');
        assertValidItem(item);
        seen.push((item as any).content[0].text);
      }
      expect(seen).toEqual(input.map((item) => item.content).reverse());

      const ascending: any = await (await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?order=asc&limit=3`)).json();
      expect(ascending.data.map((item: any) => item.content[0].text)).toEqual(['message 0', 'message 1', 'message 2']);
      expect(ascending.has_more).toBe(true);
      expect(ascending.first_id).toBe(ascending.data[0].id);
      expect(ascending.last_id).toBe(ascending.data[2].id);
      const after: any = await (await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?order=asc&limit=2&after=${ascending.last_id}`)).json();
      expect(after.data.map((item: any) => item.content[0].text)).toEqual(['message 3', 'message 4']);
      const before: any = await (await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?order=asc&before=${ascending.last_id}`)).json();
      expect(before.data.map((item: any) => item.content[0].text)).toEqual(['message 0', 'message 1']);
      expect(before.has_more).toBe(false);
      const everything: any = await (await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?limit=100`)).json();
      expect(everything.data).toHaveLength(45);
      expect(everything.has_more).toBe(false);
    });

    it('input_items lists every item kind in output item shapes', async () => {
      const response = await client.responses.create({
        model: 'm',
        input: [
          { role: 'developer', content: 'dev' },
          { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' } as OpenAI.Responses.ResponseInputImage] },
          { role: 'assistant', content: 'earlier answer' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'done' },
        ],
      });
      const list: any = await (await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?order=asc`)).json();
      expect(list.data.map((item: any) => [item.type, item.role ?? null, item.status])).toEqual([
        ['message', 'developer', 'completed'],
        ['message', 'user', 'completed'],
        ['message', 'assistant', 'completed'],
        ['function_call', null, 'completed'],
        ['function_call_output', null, 'completed'],
      ]);
      expect(list.data[1].content).toEqual([{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }]);
      expect(list.data[2].content).toEqual([{ type: 'output_text', text: 'earlier answer', annotations: [] }]);
      for (const item of list.data) {
        expect(item.id).toMatch(/^(msg|fc|fco)_/);
        assertValidItem(item);
      }
    });

    it('bad list and retrieve parameters are 400s naming the parameter; unknown ids 404', async () => {
      const response = await client.responses.create({ model: 'm', input: 'x' });
      for (const [query, param] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['order=sideways', 'order'],
      ]) {
        const result = await fetch(`${gateway.baseURL}/responses/${response.id}/input_items?${query}`);
        const body: any = await result.json();
        expect(result.status).toBe(400);
        expect(body.error.param).toBe(param);
      }
      // However the client spells the list (openai-node writes include[]=…), the refusal names the entry it sent.
      for (const [query, param] of [
        ['include[]=everything', 'include[0]'],
        ['include=everything', 'include[0]'],
        ['include[]=reasoning.encrypted_content&include[]=everything', 'include[1]'],
      ]) {
        const badInclude = await fetch(`${gateway.baseURL}/responses/${response.id}?${query}`);
        const body: any = await badInclude.json();
        expect(badInclude.status).toBe(400);
        assertErrorEnvelope(body);
        expect(body.error).toMatchObject({ param, code: 'invalid_value' });
        expect(body.error.message).toContain('expected one of');
      }
      for (const path of ['/responses/resp_nope', '/responses/resp_nope/input_items']) {
        const result = await fetch(`${gateway.baseURL}${path}`);
        const body: any = await result.json();
        expect(result.status).toBe(404);
        assertErrorEnvelope(body);
        expect(body.error.code).toBe('response_not_found');
      }
    });
  });
}
