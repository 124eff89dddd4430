import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiChat, type TurnTokens } from '../support/provider-flavors.ts';
import { startReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** One upstream (one OpenAI account, say) reached with two keys: two provider entries, each its own limits, both deployments of `pooled`. */
function twoKeys(limits: Record<string, unknown>, baseUrl: string): Record<string, unknown> {
  const entry = (key: string) => ({ type: 'openai-chat', baseUrl, apiKey: key, limits });
  return {
    providers: { 'key-a': entry('sk-a'), 'key-b': entry('sk-b') },
    defaultProvider: 'key-a',
    models: { pooled: { deployments: [{ provider: 'key-a', model: 'gpt-x' }, { provider: 'key-b', model: 'gpt-x' }] } },
    routing: { backoffMs: 10 },
  };
}

async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

function expectRateLimited(error: InstanceType<typeof OpenAI.APIError>, maxWaitSeconds: number): void {
  expect(error.status).toBe(429);
  assertErrorEnvelope({ error: error.error });
  expect(error.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.any(String) });
  const wait = Number(error.headers?.get('retry-after'));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(maxWaitSeconds);
  expect(Number(error.headers?.get('retry-after-ms'))).toBeGreaterThan((wait - 1) * 1000);
}

describe('per-key outbound limits', () => {
  const upstream = new ScriptedChatUpstream();
  let baseUrl = '';
  let usage: TurnTokens | undefined;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    baseUrl = await upstream.start();
    upstream.setScript((request) => openaiChat.render(request, { text: `served with ${request.headers.authorization}`, ...(usage && { usage }) }));
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    usage = undefined;
  });
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });
  afterAll(() => upstream.close());

  async function gatewayWith(config: Record<string, unknown>): Promise<OpenAI> {
    const gateway = await startGateway(baseUrl, config);
    gateways.push(gateway);
    return new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  }

  it.each([false, true])('two keys at 1 request/minute each: two requests on different keys, the third a 429 that never reaches the upstream (stream %s)', async (stream) => {
    const client = await gatewayWith(twoKeys({ requestsPerMinute: 1 }, baseUrl));
    const served: string[] = [];
    for (let index = 0; index < 2; index++) {
      const { data, response } = await client.responses.create({ model: 'pooled', input: 'hi', stream: false }).withResponse();
      assertValidResponse(data);
      served.push(response.headers.get('x-loopgate-deployment')!);
      expect(data.output_text).toBe(`served with ${upstream.requests.at(-1)!.headers.authorization}`);
    }
    expect(served.sort()).toEqual(['key-a/gpt-x', 'key-b/gpt-x']);
    expect(upstream.requests.map((request) => request.headers.authorization).sort()).toEqual(['Bearer sk-a', 'Bearer sk-b']);
    expectRateLimited(await refusal(client.responses.create({ model: 'pooled', input: 'hi', stream })), 60);
    expect(upstream.requests).toHaveLength(2);
  });

  it('a key at its limit is skipped for the other whatever the weights, without a failover', async () => {
    const config = twoKeys({ requestsPerMinute: 1 }, baseUrl);
    (config.providers as Record<string, any>)['key-b'].limits = { requestsPerMinute: null };
    (config.models as any).pooled.deployments[0].weight = 1_000;
    const client = await gatewayWith(config);
    const deployments: string[] = [];
    for (let index = 0; index < 4; index++) deployments.push((await client.responses.create({ model: 'pooled', input: 'hi' }).withResponse()).response.headers.get('x-loopgate-deployment')!);
    // key-a's one request, then key-b only (key-a, drawn first nearly always, is passed over).
    expect(deployments.filter((deployment) => deployment === 'key-a/gpt-x')).toHaveLength(1);
    expect(upstream.requests.filter((request) => request.headers.authorization === 'Bearer sk-a')).toHaveLength(1);
    expect(upstream.requests).toHaveLength(4);
  });

  it('an unrouted model honours its provider entry limits', async () => {
    const client = await gatewayWith({ providers: { openai: { type: 'openai-chat', baseUrl, apiKey: 'sk-one', limits: { requestsPerMinute: 2 } } } });
    await client.responses.create({ model: 'gpt-test', input: 'hi' });
    await client.responses.create({ model: 'gpt-test', input: 'hi' });
    const error = await refusal(client.responses.create({ model: 'gpt-test', input: 'hi' }));
    expectRateLimited(error, 30);
    expect(error.error).toMatchObject({ message: expect.stringContaining("'openai'") });
    expect(upstream.requests).toHaveLength(2);
  });

  it('tokens per minute: the usage the upstream reports is charged, and the next call waits for it', async () => {
    const client = await gatewayWith({ providers: { openai: { type: 'openai-chat', baseUrl, apiKey: 'sk-one', limits: { tokensPerMinute: 6_000 } } } });
    // The gateway estimates a few tokens for "hi"; the upstream says it used 7000.
    usage = { input: 6_500, output: 500 };
    await client.responses.create({ model: 'gpt-test', input: 'hi' });
    const error = await refusal(client.responses.create({ model: 'gpt-test', input: 'hi' }));
    // 1000 tokens overdrawn at 6000 a minute: a refill of about 10 s.
    expectRateLimited(error, 11);
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(10);
    expect(error.error).toMatchObject({ message: expect.stringContaining('tokens per minute') });
    expect(upstream.requests).toHaveLength(1);
  });

  it('tokens per minute: an input estimated above the limit is refused before the call, as never passing', async () => {
    const client = await gatewayWith({ providers: { openai: { type: 'openai-chat', baseUrl, apiKey: 'sk-one', limits: { tokensPerMinute: 50 } } } });
    await client.responses.create({ model: 'gpt-test', input: 'hi' });
    const error = await refusal(client.responses.create({ model: 'gpt-test', input: 'lorem ipsum dolor sit amet '.repeat(40) }));
    expect(error.status).toBe(429);
    expect(error.error).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(error.headers?.get('retry-after')).toBeNull();
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(upstream.requests).toHaveLength(1);
  });

  it('concurrent requests: a second call while the first streams is refused, and the slot frees when it ends', async () => {
    const client = await gatewayWith({ providers: { openai: { type: 'openai-chat', baseUrl, apiKey: 'sk-one', limits: { concurrentRequests: 1 } } } });
    const slow = openaiChat.render({ method: 'POST', path: '/chat/completions', headers: {}, body: { stream: true } }, { textPieces: ['one ', 'two ', 'three'] });
    upstream.setScript(() => ({ ...(slow as Extract<typeof slow, { kind: 'sse' }>), pauseMs: 500 }));
    try {
      const running = await client.responses.create({ model: 'gpt-test', input: 'hi', stream: true });
      const iterator = running[Symbol.asyncIterator]();
      // Once text flows, the first call holds the key's one slot.
      while ((await iterator.next()).value?.type !== 'response.output_text.delta');
      const error = await refusal(client.responses.create({ model: 'gpt-test', input: 'hi' }));
      expect(error.status).toBe(429);
      expect(error.error).toMatchObject({ message: expect.stringContaining('concurrent requests') });
      expect(upstream.requests).toHaveLength(1);
      while (!(await iterator.next()).done);
    } finally {
      upstream.setScript((request) => openaiChat.render(request, { text: `served with ${request.headers.authorization}` }));
    }
    expect((await client.responses.create({ model: 'gpt-test', input: 'hi' })).output_text).toContain('served');
    expect(upstream.requests).toHaveLength(2);
  });
});

describe('per-key limits shared by two replicas on one Redis', () => {
  const upstream = new ScriptedChatUpstream();
  let baseUrl = '';
  beforeAll(async () => {
    baseUrl = await upstream.start();
    upstream.setScript((request) => openaiChat.render(request, { text: 'ok' }));
  });
  afterAll(() => upstream.close());

  it('two keys at 1 request/minute: one request on each replica, then both replicas refuse', async () => {
    const pair = await startReplicaPair('redis', baseUrl, twoKeys({ requestsPerMinute: 1 }, baseUrl));
    try {
      const first = await pair.clientOne.responses.create({ model: 'pooled', input: 'hi' }).withResponse();
      const second = await pair.clientOther.responses.create({ model: 'pooled', input: 'hi' }).withResponse();
      expect([first.response.headers.get('x-loopgate-deployment'), second.response.headers.get('x-loopgate-deployment')].sort()).toEqual(['key-a/gpt-x', 'key-b/gpt-x']);
      expectRateLimited(await refusal(pair.clientOne.responses.create({ model: 'pooled', input: 'hi' })), 60);
      expectRateLimited(await refusal(pair.clientOther.responses.create({ model: 'pooled', input: 'hi' })), 60);
      expect(upstream.requests).toHaveLength(2);
    } finally {
      await pair.close();
    }
  });
});
