import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const LEASE_MS = 1_000;

/** An answer long enough to kill its replica in the middle of it. */
function slowAnswer(): UpstreamReply {
  const text = 'a long answer that is still being written when its replica dies';
  return { kind: 'sse', pauseMs: 100, pieces: sse([chunk({ role: 'assistant', content: '' }), ...[...text].map((char) => chunk({ content: char })), chunk({}, 'stop'), usageChunk(5, text.length)]) };
}

/**
 * A replica that dies (kill -9) in the middle of background responses: the
 * other notices the lapsed lease and ends them as failed, in a bound that
 * is the lease plus one renewal tick (documented in config/loopgate.jsonc).
 */
for (const storeKind of ['redis', 'redis-cluster'] as const) {
  describe(`background responses outlive their replica on ${storeKind}`, () => {
    const upstream = new ScriptedChatUpstream(() => slowAnswer());
    let redis: TestRedis | null = null;
    let cluster: TestRedisCluster | null = null;
    let storeEnv: Record<string, string>;
    let storeConfig: Record<string, unknown>;
    let upstreamUrl: string;
    const processes: GatewayProcess[] = [];

    beforeAll(async () => {
      upstreamUrl = await upstream.start();
      if (storeKind === 'redis') {
        redis = await acquireRedis();
        const prefix = redis.prefix();
        storeEnv = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
        storeConfig = { redisUrl: redis.url, keyPrefix: prefix };
      } else {
        cluster = await startRedisCluster();
        storeEnv = { REDIS_CLUSTER_NODES: cluster.nodes.join(','), REDIS_KEY_PREFIX: 'failover:' };
        storeConfig = { clusterNodes: cluster.nodes, keyPrefix: 'failover:' };
      }
    });
    afterAll(async () => {
      for (const gateway of processes) await gateway.stop();
      await upstream.close();
      await redis?.cleanup();
      await redis?.stop();
      await cluster?.stop();
    });

    const startReplica = async () => {
      const gateway = await startGatewayProcess({ ...storeEnv, OPENAI_BASE_URL: upstreamUrl, OPENAI_API_KEY: 'sk-test', DEFAULT_MODEL: 'm', BACKGROUND_LEASE_MS: String(LEASE_MS) });
      processes.push(gateway);
      await waitFor(async () => (await fetch(`${gateway.origin}/readyz`)).status === 200, 10_000, 50);
      return gateway;
    };

    it('kill -9 of the owner: the other replica ends its responses as failed within the lease bound, and a reader of the stream gets the terminal event', async () => {
      const doomed = await startReplica();
      const survivor = await startReplica();
      const onDoomed = new OpenAI({ baseURL: doomed.baseURL, apiKey: 'k', maxRetries: 0 });
      const onSurvivor = new OpenAI({ baseURL: survivor.baseURL, apiKey: 'k', maxRetries: 0 });
      const before = upstream.requests.length;
      const ids = await Promise.all([1, 2, 3].map(async () => (await onDoomed.responses.create({ model: 'm', input: 'write slowly', background: true })).id));
      await waitFor(() => upstream.requests.length >= before + 3, 10_000);
      await waitFor(async () => (await onSurvivor.responses.retrieve(ids[0]!)).status === 'in_progress', 5_000, 50);

      // Someone watching one of them on the surviving replica.
      const watched: string[] = [];
      const watching = (async () => {
        for await (const event of await onSurvivor.responses.retrieve(ids[0]!, { stream: true })) watched.push(event.type);
      })();
      await waitFor(() => watched.includes('response.output_text.delta'), 5_000);

      doomed.child.kill('SIGKILL');
      const killedAt = Date.now();
      for (const id of ids) {
        let latest = await onSurvivor.responses.retrieve(id);
        await waitFor(async () => (latest = await onSurvivor.responses.retrieve(id)).status === 'failed', 10_000, 50);
        expect(latest.error?.code).toBe('response_owner_lost');
        assertValidResponse(latest);
      }
      const detectedMs = Date.now() - killedAt;
      // Lease (1 s) + one renewal tick of the survivor (lease / 5) + polling and a loaded machine's slack.
      expect(detectedMs).toBeLessThan(LEASE_MS + LEASE_MS / 5 + 2_500);
      await watching;
      expect(watched.at(-1)).toBe('response.failed');
      expect(watched).toContain('response.output_text.delta');
      expect(survivor.logs.some((line) => line.msg?.includes('ended as failed') && ids.includes(line.response_id))).toBe(true);
    });

    it('a graceful stop ends the background responses still running at the end of the grace as incomplete (server_shutdown), stored', async () => {
      const draining = await startGateway(upstreamUrl, { store: storeConfig, background: { leaseMs: LEASE_MS }, server: { shutdownGraceMs: 300 } });
      const watcher = await startGateway(upstreamUrl, { store: storeConfig, background: { leaseMs: LEASE_MS } });
      try {
        const client = new OpenAI({ baseURL: draining.baseURL, apiKey: 'k', maxRetries: 0 });
        const queued = await client.responses.create({ model: 'm', input: 'write slowly', background: true });
        await waitFor(async () => (await client.responses.retrieve(queued.id)).status === 'in_progress', 5_000, 50);
        await draining.close();
        const final = await new OpenAI({ baseURL: watcher.baseURL, apiKey: 'k', maxRetries: 0 }).responses.retrieve(queued.id);
        expect(final.status).toBe('incomplete');
        expect(final.incomplete_details?.reason).toBe('server_shutdown');
        assertValidResponse(final);
      } finally {
        await watcher.close();
      }
    });
  });
}
