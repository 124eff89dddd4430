import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

async function readiness(gateway: RunningGateway): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const response = await fetch(`${gateway.origin}/readyz`);
    const result = { status: response.status, body: await response.json() };
    if (result.status === 200 || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Two gateways over one Redis Cluster, as replicas run in production. */
describe('replicas sharing a Redis Cluster', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let cluster: TestRedisCluster;
  let upstreamUrl: string;
  const running: RunningGateway[] = [];
  const start = async () => {
    const gateway = await startGateway(upstreamUrl, { store: { clusterNodes: cluster.nodes, keyPrefix: 'x:' } });
    running.push(gateway);
    return { gateway, client: new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 }) };
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    upstreamUrl = await upstream.start();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.close()));
    await upstream.close();
    await cluster?.stop();
  });

  it('create on one replica; fetch, continue, list and delete on the other', async () => {
    const [a, b] = [await start(), await start()];
    // Each replica reports ready once its cluster client knows the slots (as a load balancer would wait for).
    for (const { gateway } of [a, b]) expect(await readiness(gateway)).toMatchObject({ status: 200, body: { dependencies: { store: { kind: 'redis', state: 'ready' } } } });

    upstream.setScript(textReply('Hi Ada.'));
    const first = await a.client.responses.create({ model: 'm', input: 'I am Ada.' });
    const fetched = await b.client.responses.retrieve(first.id);
    assertValidResponse(fetched);
    expect(fetched.output_text).toBe('Hi Ada.');

    upstream.setScript(textReply('You are Ada.'));
    const second = await b.client.responses.create({ model: 'm', input: 'Who am I?', previous_response_id: first.id });
    expect(second.output_text).toBe('You are Ada.');
    expect(upstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'I am Ada.' },
      { role: 'assistant', content: 'Hi Ada.' },
      { role: 'user', content: 'Who am I?' },
    ]);

    const items = [];
    for await (const item of b.client.responses.inputItems.list(second.id)) items.push(item);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'message', role: 'user' });
    const firstItems = [];
    for await (const item of a.client.responses.inputItems.list(first.id)) firstItems.push(item);
    expect(firstItems).toHaveLength(1);

    await b.client.responses.delete(first.id);
    await expect(a.client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(b.client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // The chain is broken now: continuing the second response names the lost link.
    const broken = await a.client.responses.create({ model: 'm', input: 'x', previous_response_id: second.id }).catch((caught) => caught);
    expect(broken).toBeInstanceOf(OpenAI.NotFoundError);
    expect(broken.code).toBe('previous_response_not_found');
    // The second response itself is still there for both.
    expect((await a.client.responses.retrieve(second.id)).output_text).toBe('You are Ada.');
  });
});
