import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** Separate gateway processes over one real Redis, as replicas run in production. */
describe('replicas sharing Redis', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let redis: TestRedis;
  let env: Record<string, string>;
  const running: GatewayProcess[] = [];
  const start = async () => {
    const gateway = await startGatewayProcess(env);
    running.push(gateway);
    return { gateway, client: new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 }) };
  };

  beforeAll(async () => {
    redis = await acquireRedis();
    env = { OPENAI_BASE_URL: await upstream.start(), REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix() };
  });
  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.stop()));
    await upstream.close();
    await redis.cleanup();
    await redis.stop();
  });

  it('create on one replica; continue, fetch, list and delete on the other', async () => {
    const [a, b] = [await start(), await start()];
    upstream.setScript(textReply('Hi Ada.'));
    const first = await a.client.responses.create({ model: 'm', input: 'I am Ada.' });
    upstream.setScript(textReply('You are Ada.'));
    const second = await b.client.responses.create({ model: 'm', input: 'Who am I?', previous_response_id: first.id });
    expect(upstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'I am Ada.' },
      { role: 'assistant', content: 'Hi Ada.' },
      { role: 'user', content: 'Who am I?' },
    ]);
    const fetched = await b.client.responses.retrieve(first.id);
    assertValidResponse(fetched);
    expect(fetched.output_text).toBe('Hi Ada.');
    const items = [];
    for await (const item of b.client.responses.inputItems.list(second.id)) items.push(item);
    expect(items).toHaveLength(1);
    await b.client.responses.delete(first.id);
    await expect(a.client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // The chain is broken now: continuing the second response names the lost link.
    const broken = await a.client.responses.create({ model: 'm', input: 'x', previous_response_id: second.id }).catch((caught) => caught);
    expect(broken).toBeInstanceOf(OpenAI.NotFoundError);
    expect(broken.code).toBe('previous_response_not_found');
  });

  it('a conversation survives a gateway restart', async () => {
    const before = await start();
    upstream.setScript(textReply('Noted: 42.'));
    const first = await before.client.responses.create({ model: 'm', input: 'Remember 42.' });
    expect(await before.gateway.stop()).toBe(0);
    const after = await start();
    upstream.setScript(textReply('42.'));
    const next = await after.client.responses.create({ model: 'm', input: 'What number?', previous_response_id: first.id });
    expect(next.output_text).toBe('42.');
    expect(upstream.requests.at(-1)!.body.messages.slice(0, 2)).toEqual([
      { role: 'user', content: 'Remember 42.' },
      { role: 'assistant', content: 'Noted: 42.' },
    ]);
  });

  it('a streamed response can be fetched from another replica the moment its terminal event arrives', async () => {
    const [a, b] = [await start(), await start()];
    upstream.setScript(textReply('streamed answer'));
    const stream = a.client.responses.stream({ model: 'm', input: 'stream it' });
    for await (const event of stream) {
      if (event.type === 'response.completed') {
        const fetched = await b.client.responses.retrieve(event.response.id);
        expect(fetched.status).toBe('completed');
        expect(fetched.output_text).toBe('streamed answer');
      }
    }
  });
});
