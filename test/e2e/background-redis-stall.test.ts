import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { startRedisServer } from '../support/redis.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const WORDS = Array.from({ length: 30 }, (_, index) => `w${index} `);

/** Thirty words, one every 100 ms: a response still being written through a stall of a few seconds. */
function slowAnswer(): UpstreamReply {
  return { kind: 'sse', pauseMs: 100, pieces: sse([chunk({ role: 'assistant', content: '' }), ...WORDS.map((word) => chunk({ content: word })), chunk({}, 'stop'), usageChunk(5, WORDS.length)]) };
}

/**
 * Background responses across two replicas while their Redis stalls (a
 * SIGSTOP of its own redis-server: a fork for a snapshot on a big instance,
 * a VM paused, a failover), as operators meet it: commands wait in the
 * socket, the gateway gives up on them after its command timeout, and Redis
 * runs them all when it resumes, by its own clock, already past the leases.
 */
describe('background responses through a Redis stall', () => {
  const upstream = new ScriptedChatUpstream(() => slowAnswer());
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let upstreamUrl: string;
  const processes: GatewayProcess[] = [];
  /** Each test's replicas share their own keys. */
  let round = 0;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    redis = await startRedisServer();
  });
  afterEach(async () => {
    round++;
    redis.process.kill('SIGCONT');
    for (const gateway of processes.splice(0)) await gateway.stop();
  });
  afterAll(async () => {
    await upstream.close();
    await redis.stop();
  });

  const startReplica = async (leaseMs: number) => {
    const gateway = await startGatewayProcess({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: `stall${round}:`, OPENAI_BASE_URL: upstreamUrl, OPENAI_API_KEY: 'sk-test', DEFAULT_MODEL: 'm', BACKGROUND_LEASE_MS: String(leaseMs) });
    processes.push(gateway);
    await waitFor(async () => (await fetch(`${gateway.origin}/readyz`)).status === 200, 10_000, 50);
    return { gateway, client: new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 }) };
  };
  /** Two replicas on one lease, and a background response on the first, running as seen from the second. */
  const runningOnPair = async (leaseMs: number) => {
    const owner = await startReplica(leaseMs);
    const other = await startReplica(leaseMs);
    const { id } = await owner.client.responses.create({ model: 'm', input: 'write slowly', background: true });
    await waitFor(async () => (await other.client.responses.retrieve(id)).status === 'in_progress', 5_000, 50);
    return { owner, other, id };
  };
  const stall = async (ms: number) => {
    redis.process.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, ms));
    redis.process.kill('SIGCONT');
  };
  const settled = async (client: OpenAI, id: string) => {
    let latest = await client.responses.retrieve(id);
    const ended = new Set<string>(['completed', 'failed', 'cancelled', 'incomplete']);
    await waitFor(async () => ended.has((latest = await client.responses.retrieve(id).catch(() => latest)).status ?? ''), 20_000, 100);
    return latest;
  };

  it('its owner killed, then Redis stalls past the lease: the survivor still ends the response (a claim whose answer was lost is claimed again)', async () => {
    const { owner: doomed, other: survivor, id } = await runningOnPair(1_000);
    doomed.gateway.child.kill('SIGKILL');
    // The survivor's claims wait in the socket meanwhile; it gives up on each after its command timeout (1 s).
    await stall(2_500);
    const final = await settled(survivor.client, id);
    assertValidResponse(final);
    expect(final.status).toBe('failed');
    expect(final.error?.code).toBe('response_owner_lost');
  }, 40_000);

  it('its owner stalls past the lease and comes back (a long pause of the replica): the response ends failed response_owner_lost, as the reaper ended it, never "cancelled" nobody asked for', async () => {
    const { owner, other, id } = await runningOnPair(1_000);
    owner.gateway.child.kill('SIGSTOP');
    await waitFor(async () => (await other.client.responses.retrieve(id)).status === 'failed', 10_000, 50);
    owner.gateway.child.kill('SIGCONT');
    // The owner finds its lease gone at its next renewal and stops the response: it must not end it otherwise.
    await waitFor(() => owner.gateway.logs.some((line) => String(line.msg).includes('lease lapsed')), 10_000, 50);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const final = await other.client.responses.retrieve(id);
    assertValidResponse(final);
    expect(final.status).toBe('failed');
    expect(final.error?.code).toBe('response_owner_lost');
  }, 40_000);

  it('a stall shorter than the lease: a reader of the stream on the other replica gets every event, in order, and the whole text', async () => {
    const { owner, other, id } = await runningOnPair(5_000);
    const sequences: number[] = [];
    let text = '';
    const reading = (async () => {
      for await (const event of await other.client.responses.retrieve(id, { stream: true })) {
        sequences.push(event.sequence_number);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
    })();
    await waitFor(() => text.length > 0, 5_000);
    // Appends during the stall time out (1 s) and fail; the events must still reach the log, in order.
    await stall(2_000);
    await reading;
    const final = await settled(other.client, id);
    expect(final.status).toBe('completed');
    expect(text).toBe(WORDS.join(''));
    const first = sequences[0]!;
    expect(sequences).toEqual(Array.from({ length: sequences.length }, (_, index) => first + index));
  }, 40_000);
});
