import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const post = (gateway: RunningGateway, body: unknown) =>
  fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Redis taken away and given back, behind a TCP proxy the test controls. */
describe('Redis faults', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let redis: TestRedis;
  let proxy: TcpProxy;
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    redis = await acquireRedis();
    proxy = new TcpProxy(redis.url);
    await proxy.start();
    gateway = await startGateway(await upstream.start(), { store: { redisUrl: proxy.url, keyPrefix: redis.prefix(), commandTimeoutMs: 1_000 } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await proxy.close();
    await upstream.close();
    await redis.cleanup();
    await redis.stop();
  });

  it('with Redis gone, requests that need it fail fast with 503 store_unavailable; the rest still work; it recovers by itself', async () => {
    const stored = await client.responses.create({ model: 'm', input: 'before the outage' });
    await proxy.cut();

    const timed = async (request: () => Promise<Response>) => {
      const started = Date.now();
      const response = await request();
      return { response, body: (await response.json()) as any, elapsedMs: Date.now() - started };
    };
    const attempts = [
      await timed(() => post(gateway, { model: 'm', input: 'x', previous_response_id: stored.id })),
      await timed(() => fetch(`${gateway.baseURL}/responses/${stored.id}`)),
      await timed(() => fetch(`${gateway.baseURL}/responses/${stored.id}`, { method: 'DELETE' })),
      await timed(() => fetch(`${gateway.baseURL}/responses/${stored.id}/input_items`)),
      // store defaults to true: the answer cannot be kept, so it is not given as if it were.
      await timed(() => post(gateway, { model: 'm', input: 'x' })),
    ];
    // None of them reached the model.
    expect(upstream.requests.filter((request) => request.body?.messages?.some((message: any) => message.content === 'x'))).toHaveLength(0);
    for (const { response, body, elapsedMs } of attempts) {
      expect(response.status).toBe(503);
      assertErrorEnvelope(body);
      expect(body.error.code).toBe('store_unavailable');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(elapsedMs).toBeLessThan(2_500);
    }

    // A stored stream is refused before its 200 too: no model call is spent on what cannot be kept.
    const upstreamCalls = upstream.requests.length;
    const streamed = await post(gateway, { model: 'm', input: 'x', stream: true });
    expect(streamed.status).toBe(503);
    expect(((await streamed.json()) as any).error.code).toBe('store_unavailable');
    expect(upstream.requests.length).toBe(upstreamCalls);

    // What does not need Redis keeps working, and the process stays up.
    expect((await post(gateway, { model: 'm', input: 'x', store: false })).status).toBe(200);
    expect((await fetch(`${gateway.origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${gateway.origin}/readyz`)).status).toBe(503);

    await proxy.restore();
    const deadline = Date.now() + 5_000;
    let recovered: Response | null = null;
    while (Date.now() < deadline) {
      recovered = await fetch(`${gateway.baseURL}/responses/${stored.id}`);
      if (recovered.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(recovered?.status).toBe(200);
    expect((await fetch(`${gateway.origin}/readyz`)).status).toBe(200);
    const continued = await client.responses.create({ model: 'm', input: 'after the outage', previous_response_id: stored.id });
    expect(continued.previous_response_id).toBe(stored.id);
  });

  it('a gateway started while Redis is down starts, answers 503, and connects when Redis appears', async () => {
    await proxy.cut();
    const late = await startGateway(`http://127.0.0.1:9/v1`, { store: { redisUrl: proxy.url, keyPrefix: redis.prefix(), commandTimeoutMs: 500 } });
    try {
      const response = await fetch(`${late.baseURL}/responses/resp_x`);
      expect(response.status).toBe(503);
      await proxy.restore();
      const deadline = Date.now() + 5_000;
      let status = 0;
      while (Date.now() < deadline && status !== 404) {
        status = (await fetch(`${late.baseURL}/responses/resp_x`)).status;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(404);
    } finally {
      await late.close();
    }
  });
});
