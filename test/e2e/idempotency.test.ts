import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { startGateway } from '../support/gateway.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica-pair.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, textReply, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** Idempotency-Key on POST /v1/responses through the SDK, on both stores (two replicas on Redis). */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`Idempotency-Key on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('once'));
    let replicas: ReplicaPair;
    let clientOne: OpenAI;
    let clientOther: OpenAI;
    let counter = 0;
    let upstreamUrl: string;
    const key = () => ({ 'Idempotency-Key': `key-${storeKind}-${counter++}` });

    beforeAll(async () => {
      upstreamUrl = await upstream.start();
      replicas = await startReplicaPair(storeKind, upstreamUrl);
      ({ clientOne, clientOther } = replicas);
    });
    afterAll(async () => {
      await replicas.close();
      await upstream.close();
    });
    beforeEach(() => upstream.setScript(textReply('once')));

    it('a retry with the same key and body gets the first response (on any replica); the model is called once', async () => {
      const headers = key();
      const before = upstream.requests.length;
      const first = await clientOne.responses.create({ model: 'm', input: 'hi' }, { headers });
      const { data: again, response } = await clientOther.responses.create({ model: 'm', input: 'hi' }, { headers }).withResponse();
      expect(again.id).toBe(first.id);
      expect(again.output_text).toBe('once');
      assertValidResponse(again);
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      expect(upstream.requests.length).toBe(before + 1);
      // Streamed, the retry is a stream the SDK rebuilds into the same response.
      const streamHeaders = key();
      const streamed = await clientOne.responses.stream({ model: 'm', input: 'hi' }, { headers: streamHeaders }).finalResponse();
      const restreamed = await clientOther.responses.stream({ model: 'm', input: 'hi' }, { headers: streamHeaders }).finalResponse();
      expect(restreamed.id).toBe(streamed.id);
      expect(restreamed.output_text).toBe('once');
      expect(upstream.requests.length).toBe(before + 2);
      // The replayed stream on the wire: a whole, valid event stream.
      const raw = await fetch(`${replicas.other.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', ...streamHeaders }, body: JSON.stringify({ model: 'm', input: 'hi', stream: true }) });
      const { events, done } = parseSseText(await raw.text());
      expect(done).toBe(true);
      expect(assertEventStreamInvariants(events).id).toBe(streamed.id);
    });

    it('the same key with another body is a 400; while the first still runs a retry is a 409', async () => {
      const headers = key();
      upstream.setScript((request) => (request.body.stream ? textReply('slow')(request) : { ...(textCompletion('slow') as Extract<UpstreamReply, { kind: 'json' }>), delayMs: 600 }));
      const running = clientOne.responses.create({ model: 'm', input: 'slow one' }, { headers });
      await waitFor(() => upstream.requests.some((request) => JSON.stringify(request.body).includes('slow one')), 5_000);
      const busy = await clientOther.responses.create({ model: 'm', input: 'slow one' }, { headers }).catch((error: unknown) => error);
      expect(busy).toBeInstanceOf(OpenAI.ConflictError);
      expect((busy as InstanceType<typeof OpenAI.ConflictError>).code).toBe('idempotency_request_in_progress');
      const reused = await clientOther.responses.create({ model: 'm', input: 'something else' }, { headers }).catch((error: unknown) => error);
      expect(reused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((reused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('idempotency_key_reused');
      expect((await running).output_text).toBe('slow');
    });

    it("while a request runs its key is held on a lease it renews, not for the whole window: a replica that dies holding it lets it go within 30 s (its retry then runs)", async () => {
      if (storeKind !== 'redis') return;
      const headers = key();
      upstream.setScript(() => ({ ...(textCompletion('slow') as Extract<UpstreamReply, { kind: 'json' }>), delayMs: 800 }));
      const running = clientOne.responses.create({ model: 'm', input: 'held' }, { headers });
      const redis = new Redis(replicas.store.redisUrl as string);
      try {
        const redisKey = new RedisKeys(replicas.store.keyPrefix as string).idempotency('default', createHash('sha256').update(headers['Idempotency-Key']).digest('hex'));
        await waitFor(async () => (await redis.exists(redisKey)) === 1, 5_000);
        const whileRunning = await redis.ttl(redisKey);
        expect(whileRunning).toBeGreaterThan(0);
        expect(whileRunning).toBeLessThanOrEqual(30);
        await running;
        // Finished: the key keeps its response for the whole window.
        expect(await redis.ttl(redisKey)).toBeGreaterThan(3_600);
      } finally {
        redis.disconnect();
      }
    });

    it('a request that failed lets its key go: the retry runs', async () => {
      const headers = key();
      upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'boom' } } }));
      await expect(clientOne.responses.create({ model: 'm', input: 'retry me' }, { headers })).rejects.toBeInstanceOf(OpenAI.APIError);
      upstream.setScript(textReply('second time lucky'));
      expect((await clientOther.responses.create({ model: 'm', input: 'retry me' }, { headers })).output_text).toBe('second time lucky');
    });

    it('a client that lost its connection mid-stream lets its key go: the retry runs again, not a replay of the cut-off response', async () => {
      const headers = key();
      const words = Array.from({ length: 12 }, (_, index) => `w${index} `);
      upstream.setScript(() => ({ kind: 'sse', pauseMs: 100, pieces: sse([chunk({ role: 'assistant', content: '' }), ...words.map((word) => chunk({ content: word })), chunk({}, 'stop'), usageChunk(5, 12)]) }));
      const abort = new AbortController();
      const first = await fetch(`${replicas.one.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'm', input: 'cut me off', stream: true }), signal: abort.signal });
      const reader = first.body!.getReader();
      let seen = '';
      while (!seen.includes('response.output_text.delta')) seen += new TextDecoder().decode((await reader.read()).value);
      const id = /"id":"(resp_[0-9a-f]+)"/.exec(seen)![1]!;
      abort.abort();
      await waitFor(async () => (await clientOne.responses.retrieve(id).catch(() => null))?.status === 'cancelled', 10_000, 50);
      upstream.setScript(textReply('all of it'));
      const again = await fetch(`${replicas.other.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'm', input: 'cut me off', stream: true }) });
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      const retried = assertEventStreamInvariants(parseSseText(await again.text()).events);
      expect(retried.id).not.toBe(id);
      expect(retried.status).toBe('completed');
      expect(retried.output[0].content[0].text).toBe('all of it');
    });

    it("the SDK's own retry of a conversation's turn that timed out, with its key, adds the turn once: the cut-off attempt keeps nothing in the conversation", async () => {
      const headers = key();
      const conversation = await clientOne.conversations.create();
      let calls = 0;
      // The first call outlasts the client's timeout; the retry's is answered at once.
      upstream.setScript((request) => ({ ...(textCompletion('answered') as Extract<UpstreamReply, { kind: 'json' }>), ...(request.body.stream !== true && calls++ === 0 && { delayMs: 3_000 }) }));
      const impatient = new OpenAI({ baseURL: replicas.one.baseURL, apiKey: 'k', timeout: 1_000, maxRetries: 1 });
      const before = upstream.requests.length;
      const response = await impatient.responses.create({ model: 'm', conversation: conversation.id, input: 'hello' }, { headers });
      assertValidResponse(response);
      expect(response.output_text).toBe('answered');
      const sent = upstream.requests.slice(before).map((request) => request.body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content));
      expect(sent).toEqual([['hello'], ['hello']]);
      const items = await clientOther.conversations.items.list(conversation.id, { order: 'asc' });
      expect(items.data.map((item: any) => [item.role, item.content[0].text])).toEqual([['user', 'hello'], ['assistant', 'answered']]);
    });

    it('a background request retried gets the same response, not a second run', async () => {
      const headers = key();
      const before = upstream.requests.length;
      const first = await clientOne.responses.create({ model: 'm', input: 'bg', background: true }, { headers });
      const again = await clientOther.responses.create({ model: 'm', input: 'bg', background: true }, { headers });
      expect(again.id).toBe(first.id);
      await waitFor(async () => (await clientOther.responses.retrieve(first.id)).status === 'completed', 10_000, 50);
      expect(upstream.requests.length).toBe(before + 1);
    });

    it("a streamed background request retried after its events expired (their TTL is shorter than the key's) gets the stored response as a stream, not an empty one", async () => {
      const shortLived = await startReplicaPair(storeKind, upstreamUrl, { background: { eventsTtlSeconds: 1 } });
      try {
        const headers = { ...key(), 'content-type': 'application/json' };
        const body = JSON.stringify({ model: 'm', input: 'bg', background: true, stream: true });
        const first = parseSseText(await (await fetch(`${shortLived.one.baseURL}/responses`, { method: 'POST', headers, body })).text());
        const id = first.events[0]!.response.id;
        await waitFor(async () => (await shortLived.clientOther.responses.retrieve(id)).status === 'completed', 10_000, 50);
        await new Promise((resolve) => setTimeout(resolve, 2_100));
        const retried = await fetch(`${shortLived.other.baseURL}/responses`, { method: 'POST', headers, body });
        expect(retried.headers.get('idempotent-replayed')).toBe('true');
        const replayed = parseSseText(await retried.text());
        expect(replayed.events.at(-1)).toMatchObject({ type: 'response.completed', response: { id } });
        expect(assertEventStreamInvariants(replayed.events).output.at(-1).content[0].text).toBe('once');
      } finally {
        await shortLived.close();
      }
    });
  });
}

/** A rolling restart: the replica a keyed request ran on stops before it finished. */
describe('Idempotency-Key across a replica that shuts down', () => {
  const upstream = new ScriptedChatUpstream(textReply('once'));
  let replicas: ReplicaPair;
  let upstreamUrl: string;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    replicas = await startReplicaPair('redis', upstreamUrl);
  });
  afterAll(async () => {
    await replicas.close();
    await upstream.close();
  });

  for (const stream of [false, true]) {
    it(`a response cut off by the shutdown (incomplete, server_shutdown) lets its key go: the retry on another replica runs, not a replay of the cut-off answer (stream: ${stream})`, async () => {
      const headers = { 'content-type': 'application/json', 'Idempotency-Key': `restart-${stream}` };
      const body = JSON.stringify({ model: 'm', input: 'slow', stream });
      upstream.setScript(() => ({ kind: 'sse', pauseMs: 150, pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 20 }, (_, index) => chunk({ content: `w${index} ` })), chunk({}, 'stop'), usageChunk(5, 20)]) }));
      const stopping = await startGateway(upstreamUrl, { store: replicas.store, server: { shutdownGraceMs: 200 } });
      const first = fetch(`${stopping.baseURL}/responses`, { method: 'POST', headers, body }).then((response) => response.text());
      await waitFor(() => upstream.requests.some((request) => JSON.stringify(request.body).includes('slow')), 5_000, 20);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await stopping.close();
      const cut = await first;
      expect(cut).toContain('server_shutdown');
      upstream.setScript(textReply('all of it'));
      const again = await fetch(`${replicas.other.baseURL}/responses`, { method: 'POST', headers, body });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      const text = await again.text();
      const retried = stream ? assertEventStreamInvariants(parseSseText(text).events) : JSON.parse(text);
      assertValidResponse(retried);
      expect(retried.status).toBe('completed');
      expect(retried.output[0].content[0].text).toBe('all of it');
    });
  }

  it("a conversation's turn cut short by the shutdown was answered (incomplete): it stays in the conversation, key or not", async () => {
    const conversation = await replicas.clientOne.conversations.create();
    upstream.setScript(() => ({ kind: 'sse', pauseMs: 150, pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 20 }, (_, index) => chunk({ content: `w${index} ` })), chunk({}, 'stop'), usageChunk(5, 20)]) }));
    const stopping = await startGateway(upstreamUrl, { store: replicas.store, server: { shutdownGraceMs: 200 } });
    const first = fetch(`${stopping.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'Idempotency-Key': 'restart-conversation' }, body: JSON.stringify({ model: 'm', conversation: conversation.id, input: 'slow turn' }) }).then((response) => response.json());
    await waitFor(() => upstream.requests.some((request) => JSON.stringify(request.body).includes('slow turn')), 5_000, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await stopping.close();
    const cut: any = await first;
    assertValidResponse(cut);
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'server_shutdown' } });
    // The client was answered and will not retry a 200: the turn it saw is the conversation's.
    const items = await replicas.clientOther.conversations.items.list(conversation.id, { order: 'asc' });
    expect((items.data[0] as any).content[0].text).toBe('slow turn');
    expect(items.data.slice(1).map((item) => item.id)).toEqual(cut.output.map((item: any) => item.id));
  });
});
