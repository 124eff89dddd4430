import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { record } from './response-store-contract.ts';

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/**
 * A Cluster client stays `ready` while a master that holds a tenant's slot
 * is gone (no replica took over): only commands tell. `/readyz` reads the
 * store's health, so the health must say so once commands fail.
 */
describe('RedisResponseStore on a Redis Cluster with a slot unserved', () => {
  it('is unavailable once commands fail though the client says ready, naming why', async () => {
    const prefix = `loopgate-test:${randomUUID()}:`;
    const store = new RedisResponseStore({ url: '', clusterNodes: cluster.nodes, keyPrefix: prefix, ttlSeconds: 60, commandTimeoutMs: 500 });
    try {
      await store.ensureWritable();
      await store.put(record('t', 'resp_1', null));
      expect(store.health()).toEqual({ state: 'ready' });
      const client = store.redis as Cluster;
      const slot = Number(await client.cluster('KEYSLOT', `${prefix}{t:t}:r:x`));
      const ranges = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      const [, , [, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      await cluster.killNode(cluster.nodes.findIndex((node) => new URL(node).port === String(port)));
      await waitFor(async () => (await store.get('t', 'resp_1').then(() => false, () => true)), 10_000, 100);
      expect(store.isReady()).toBe(true);
      expect(store.health()).toEqual({ state: 'unavailable', reason: expect.any(String) });
    } finally {
      await store.close();
    }
  }, 60_000);
});
