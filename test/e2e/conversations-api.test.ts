import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidItem, assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const KEY_A = 'sk-tenant-a-0123456789';
const KEY_B = 'sk-tenant-b-0123456789';

const userMessage = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text });

/** OpenAI's Conversations API through the official SDK, on both stores. */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`Conversations API on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    let redis: TestRedis | null = null;
    let keyPrefix = '';
    let gateway: RunningGateway;
    let client: OpenAI;
    let other: OpenAI;
    const raw = (path: string, init: RequestInit & { key?: string } = {}) =>
      fetch(`${gateway.baseURL}${path}`, { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${init.key ?? KEY_A}` } });

    beforeAll(async () => {
      const upstreamUrl = await upstream.start();
      if (storeKind === 'redis') redis = await acquireRedis();
      gateway = await startGateway(upstreamUrl, {
        auth: { apiKeys: [{ key: KEY_A, tenant: 'team-a' }, { key: KEY_B, tenant: 'team-b' }] },
        ...(redis && { store: { redisUrl: redis.url, keyPrefix: (keyPrefix = redis.prefix()) } }),
      });
      client = new OpenAI({ baseURL: gateway.baseURL, apiKey: KEY_A, maxRetries: 0 });
      other = new OpenAI({ baseURL: gateway.baseURL, apiKey: KEY_B, maxRetries: 0 });
    });
    afterAll(async () => {
      await gateway.close();
      await upstream.close();
      await redis?.cleanup();
      await redis?.stop();
    });

    it('creates, retrieves, updates and deletes a conversation', async () => {
      const before = Math.floor(Date.now() / 1000);
      const created = await client.conversations.create({ metadata: { topic: 'demo' }, items: [userMessage('Hello!')] });
      expect(created).toEqual({ id: expect.stringMatching(/^conv_[0-9a-f]{32}$/), object: 'conversation', created_at: expect.any(Number), metadata: { topic: 'demo' } });
      expect(created.created_at).toBeGreaterThanOrEqual(before);
      expect(created.created_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

      expect(await client.conversations.retrieve(created.id)).toEqual(created);
      if (redis) {
        // On Redis, the conversation lives in Redis under the tenant's keys (not in this process).
        const probe = new Redis(redis.url);
        const keys = new RedisKeys(keyPrefix);
        expect(await probe.exists(keys.conversation('team-a', created.id), keys.conversationOrder('team-a', created.id), keys.conversationItems('team-a', created.id))).toBe(3);
        probe.disconnect();
      }
      const updated = await client.conversations.update(created.id, { metadata: { topic: 'changed', owner: 'me' } });
      expect(updated).toEqual({ ...created, metadata: { topic: 'changed', owner: 'me' } });
      expect(await client.conversations.retrieve(created.id)).toEqual(updated);

      expect(await client.conversations.delete(created.id)).toEqual({ id: created.id, object: 'conversation.deleted', deleted: true });
      const gone = await client.conversations.retrieve(created.id).catch((caught: unknown) => caught);
      expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
      expect((gone as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'conversation_not_found' });
      await expect(client.conversations.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.conversations.items.list(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('an empty create makes an empty conversation', async () => {
      const created = await client.conversations.create();
      expect(created.metadata).toEqual({});
      const page = await client.conversations.items.list(created.id);
      expect(page.data).toEqual([]);
      const body = await (await raw(`/conversations/${created.id}/items`)).json();
      expect(body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    });

    it('adds, lists (both orders, paginated), retrieves and deletes items', async () => {
      const conversation = await client.conversations.create({ items: [userMessage('one'), { type: 'message', role: 'assistant', content: 'two' }] });
      const added = await client.conversations.items.create(conversation.id, {
        items: [userMessage('three'), { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}' }, { type: 'function_call_output', call_id: 'call_1', output: 'found' }],
      });
      expect(added.object).toBe('list');
      expect(added.has_more).toBe(false);
      expect(added.data.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
      const [message, call, output] = added.data as any[];
      expect(message).toEqual({ id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'three' }] });
      expect(call).toMatchObject({ id: expect.stringMatching(/^fc_/), type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}', status: 'completed' });
      expect(output).toMatchObject({ id: expect.stringMatching(/^fco_/), type: 'function_call_output', call_id: 'call_1', output: 'found' });
      expect(added.first_id).toBe(message.id);
      expect(added.last_id).toBe(output.id);

      const texts = (items: any[]) => items.map((item) => (item.type === 'message' ? item.content[0].text : item.type));
      const desc = await client.conversations.items.list(conversation.id);
      expect(texts(desc.data)).toEqual(['function_call_output', 'function_call', 'three', 'two', 'one']);
      expect(desc.has_more).toBe(false);
      expect(desc.data[3]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two', annotations: [] }] });
      const asc = await client.conversations.items.list(conversation.id, { order: 'asc', limit: 2 });
      expect(texts(asc.data)).toEqual(['one', 'two']);
      expect(asc.has_more).toBe(true);
      expect(asc.last_id).toBe(asc.data[1]!.id);

      const walkedDesc: any[] = [];
      for await (const item of client.conversations.items.list(conversation.id, { limit: 2 })) walkedDesc.push(item);
      expect(texts(walkedDesc)).toEqual(['function_call_output', 'function_call', 'three', 'two', 'one']);
      for (const item of walkedDesc) assertValidItem(item);
      const walkedAsc: any[] = [];
      for await (const item of client.conversations.items.list(conversation.id, { limit: 1, order: 'asc', include: ['reasoning.encrypted_content'] })) walkedAsc.push(item);
      expect(walkedAsc).toEqual([...walkedDesc].reverse());

      const after = await client.conversations.items.list(conversation.id, { order: 'asc', after: asc.data[1]!.id, limit: 10 });
      expect(texts(after.data)).toEqual(['three', 'function_call', 'function_call_output']);
      expect(after.has_more).toBe(false);

      expect(await client.conversations.items.retrieve(call.id, { conversation_id: conversation.id })).toEqual(call);
      const deleted = await client.conversations.items.delete(call.id, { conversation_id: conversation.id });
      expect(deleted).toEqual(conversation);
      expect(texts((await client.conversations.items.list(conversation.id, { order: 'asc' })).data)).toEqual(['one', 'two', 'three', 'function_call_output']);

      const missing = await client.conversations.items.retrieve(call.id, { conversation_id: conversation.id }).catch((caught: unknown) => caught);
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: 'item_not_found' });
      const deleteMissing = await client.conversations.items.delete(call.id, { conversation_id: conversation.id }).catch((caught: unknown) => caught);
      expect((deleteMissing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: 'item_not_found' });
      const afterMissing = await raw(`/conversations/${conversation.id}/items?after=${call.id}`);
      expect(afterMissing.status).toBe(404);
      expect(await afterMissing.json()).toMatchObject({ error: { code: 'item_not_found', param: 'after' } });
    });

    it('a tool output must answer a call the conversation holds or one added with it, as on POST /v1/responses', async () => {
      const call = { type: 'function_call' as const, call_id: 'call_w', name: 'weather', arguments: '{}' };
      const output = (callId: string) => ({ type: 'function_call_output' as const, call_id: callId, output: 'sunny' });
      const conversation = await client.conversations.create({ items: [userMessage('Weather?'), call] });
      // One answering the call held, and a call added together with its answer.
      await client.conversations.items.create(conversation.id, { items: [output('call_w')] });
      await client.conversations.items.create(conversation.id, { items: [{ ...call, call_id: 'call_x' }, output('call_x')] });
      const orphan = await client.conversations.items.create(conversation.id, { items: [userMessage('and?'), output('call_nowhere')] }).catch((error: unknown) => error);
      expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
      expect(orphan).toMatchObject({ code: 'unknown_call_id', param: 'items[1].call_id' });
      const atCreate = await client.conversations.create({ items: [output('call_w')] }).catch((error: unknown) => error);
      expect(atCreate).toMatchObject({ status: 400, code: 'unknown_call_id', param: 'items[0].call_id' });
      // Nothing of the refused batch was added.
      const types = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map((item) => item.type);
      expect(types).toEqual(['message', 'function_call', 'function_call_output', 'function_call', 'function_call_output']);
    });

    it("a tool output whose call was deleted from the conversation reaches the model as a message, never as a result answering no call (which upstreams refuse)", async () => {
      const call = { type: 'function_call' as const, call_id: 'call_gone', name: 'weather', arguments: '{}' };
      const conversation = await client.conversations.create({ items: [userMessage('Weather?'), call, { type: 'function_call_output', call_id: 'call_gone', output: 'sunny' }] });
      const listed = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data;
      await client.conversations.items.delete(listed.find((item) => item.type === 'function_call')!.id!, { conversation_id: conversation.id });
      assertValidResponse(await client.responses.create({ model: 'm', conversation: conversation.id, input: 'and tomorrow?' }));
      const messages = upstream.requests.at(-1)!.body.messages as { role: string; content: string }[];
      expect(messages.map((message) => message.role)).toEqual(['user', 'user', 'user']);
      expect(messages[1]!.content).toContain('sunny');
    });

    it('keeps ids the client gives its items', async () => {
      const conversation = await client.conversations.create({ items: [{ id: 'msg_mine', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } as OpenAI.Responses.ResponseInputItem] });
      expect(await client.conversations.items.retrieve('msg_mine', { conversation_id: conversation.id })).toMatchObject({ id: 'msg_mine', content: [{ type: 'input_text', text: 'hi' }] });
    });

    it('an item whose id is as long as ids may be (256 characters) is retrieved and deleted by it', async () => {
      const id = `msg_${'x'.repeat(252)}`;
      const conversation = await client.conversations.create({ items: [{ id, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'long' }] } as OpenAI.Responses.ResponseInputItem] });
      expect(await client.conversations.items.retrieve(id, { conversation_id: conversation.id })).toMatchObject({ id, content: [{ type: 'input_text', text: 'long' }] });
      await client.conversations.items.delete(id, { conversation_id: conversation.id });
      expect((await client.conversations.items.list(conversation.id)).data).toEqual([]);
    });

    it("another tenant's conversation is indistinguishable from one that never existed", async () => {
      const mine = await client.conversations.create({ metadata: { secret: 'yes' }, items: [userMessage('private')] });
      const itemId = (await client.conversations.items.list(mine.id)).data[0]!.id!;
      const attempts: [string, () => Promise<unknown>][] = [
        ['retrieve', () => other.conversations.retrieve(mine.id)],
        ['update', () => other.conversations.update(mine.id, { metadata: { secret: 'no' } })],
        ['delete', () => other.conversations.delete(mine.id)],
        ['items.list', () => other.conversations.items.list(mine.id)],
        ['items.create', () => other.conversations.items.create(mine.id, { items: [userMessage('intrusion')] })],
        ['items.retrieve', () => other.conversations.items.retrieve(itemId, { conversation_id: mine.id })],
        ['items.delete', () => other.conversations.items.delete(itemId, { conversation_id: mine.id })],
      ];
      for (const [name, attempt] of attempts) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(error, name).toBeInstanceOf(OpenAI.NotFoundError);
        expect((error as InstanceType<typeof OpenAI.NotFoundError>).error, name).toEqual({ message: `Conversation with id '${mine.id}' not found.`, type: 'invalid_request_error', param: null, code: 'conversation_not_found' });
      }
      const unknown = await raw('/conversations/conv_00000000000000000000000000000000', { key: KEY_B });
      const foreign = await raw(`/conversations/${mine.id}`, { key: KEY_B });
      expect(foreign.status).toBe(404);
      expect(((await foreign.json()) as any).error.message.replace(mine.id, 'ID')).toBe(((await unknown.json()) as any).error.message.replace('conv_00000000000000000000000000000000', 'ID'));
      // Untouched by all of it.
      expect(await client.conversations.retrieve(mine.id)).toEqual(mine);
      expect((await client.conversations.items.list(mine.id)).data.map((item) => item.id)).toEqual([itemId]);
    });

    it('refuses more than 20 items, bad metadata and unknown parameters with 400 in the error envelope', async () => {
      const items = Array.from({ length: 21 }, (_, index) => userMessage(`m${index}`));
      const tooMany = await client.conversations.create({ items }).catch((caught: unknown) => caught);
      expect(tooMany).toBeInstanceOf(OpenAI.BadRequestError);
      expect((tooMany as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'items', code: 'array_above_max_length' });

      const conversation = await client.conversations.create({ items: items.slice(0, 20) });
      expect((await client.conversations.items.list(conversation.id, { limit: 100 })).data).toHaveLength(20);
      const addTooMany = await raw(`/conversations/${conversation.id}/items`, { method: 'POST', body: JSON.stringify({ items }) });
      expect(addTooMany.status).toBe(400);
      const addBody = await addTooMany.json();
      assertErrorEnvelope(addBody);
      expect(addBody.error).toMatchObject({ param: 'items', code: 'array_above_max_length' });
      expect((await client.conversations.items.list(conversation.id, { limit: 100 })).data).toHaveLength(20);

      const cases: [string, string, unknown, string | null][] = [
        ['POST', '/conversations', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }, 'metadata'],
        ['POST', '/conversations', { metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
        ['POST', '/conversations', { metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
        ['POST', '/conversations', { metadata: { k: 1 } }, 'metadata.k'],
        ['POST', '/conversations', { items: [{ type: 'item_reference', id: 'msg_x' }] }, 'items[0].type'],
        ['POST', '/conversations', { items: [{ type: 'message', role: 'user' }] }, 'items[0].content'],
        ['POST', '/conversations', { unknown: 1 }, 'unknown'],
        ['POST', `/conversations/${conversation.id}`, {}, 'metadata'],
        ['POST', `/conversations/${conversation.id}`, { metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
        ['POST', `/conversations/${conversation.id}/items`, {}, 'items'],
        // One id twice in one request: the store would keep only the second while the answer listed both.
        ['POST', '/conversations', { items: [{ type: 'message', id: 'msg_twice', role: 'user', content: 'a' }, { type: 'message', id: 'msg_twice', role: 'user', content: 'b' }] }, 'items[1].id'],
        ['POST', `/conversations/${conversation.id}/items`, { items: [{ type: 'message', id: 'msg_twice', role: 'user', content: 'a' }, userMessage('between'), { type: 'message', id: 'msg_twice', role: 'user', content: 'b' }] }, 'items[2].id'],
        ['GET', `/conversations/${conversation.id}/items?limit=0`, undefined, 'limit'],
        ['GET', `/conversations/${conversation.id}/items?limit=101`, undefined, 'limit'],
        ['GET', `/conversations/${conversation.id}/items?order=sideways`, undefined, 'order'],
      ];
      for (const [method, path, body, param] of cases) {
        const response = await raw(path, { method, ...(body !== undefined && { body: JSON.stringify(body) }) });
        const answer = await response.json();
        expect({ path, body, status: response.status }).toEqual({ path, body, status: 400 });
        assertErrorEnvelope(answer);
        expect({ path, body, param: answer.error.param, type: answer.error.type }).toEqual({ path, body, param, type: 'invalid_request_error' });
      }
      // Valid limits at the bounds, and 16 metadata keys of the longest sizes, are fine.
      expect((await raw(`/conversations/${conversation.id}/items?limit=100`)).status).toBe(200);
      const largest = Object.fromEntries(Array.from({ length: 16 }, (_, index) => [`${index}`.padEnd(64, 'k'), 'v'.repeat(512)]));
      expect((await client.conversations.update(conversation.id, { metadata: largest })).metadata).toEqual(largest);
    });
  });
}
