import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { startRedisServer } from '../support/redis.ts';
import { ScriptedChatUpstream, textCompletion, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * The Idempotency-Key's store failing while the key is settled, once the
 * answer is in hand (Redis paused for writes past its command timeout): the
 * client still gets its answer. The key was the client's failure: a 503 in
 * place of a response already paid for, and its retries refused for the
 * lease's 30 s as "in progress".
 */
describe('Idempotency-Key when its store fails at the end', () => {
  const upstream = new ScriptedChatUpstream(() => ({ ...(textCompletion('answered') as Extract<UpstreamReply, { kind: 'json' }>), delayMs: 400 }));
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let gateway: RunningGateway;
  let admin: Redis;

  beforeAll(async () => {
    const [upstreamUrl, started] = await Promise.all([upstream.start(), startRedisServer()]);
    redis = started;
    admin = new Redis(redis.url);
    gateway = await startGateway(upstreamUrl, { store: { redisUrl: redis.url, commandTimeoutMs: 300 } });
  });
  afterAll(async () => {
    admin.disconnect();
    await gateway.close();
    await upstream.close();
    await redis.stop();
  });

  it('a store: false request whose key cannot be let go (Redis paused for writes) still gets its answer', async () => {
    const answer = fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'paused-at-the-end' }, body: JSON.stringify({ model: 'm', input: 'hi', store: false }) });
    // The upstream is called: the key is held. Writes stop until well after the answer is back.
    await waitFor(() => upstream.requests.length === 1, 5_000);
    await admin.call('CLIENT', 'PAUSE', '1500', 'WRITE');
    const response = await answer;
    expect(response.status).toBe(200);
    const body = await response.json();
    assertValidResponse(body);
    expect((body as any).output[0].content[0].text).toBe('answered');
    // Let go once Redis takes writes again, not when the 30 s lease lapses: the retry runs.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const retried = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'paused-at-the-end' }, body: JSON.stringify({ model: 'm', input: 'hi', store: false }) });
    expect(retried.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
  });
});
