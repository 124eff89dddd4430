import { randomUUID } from 'node:crypto';
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { record } from './response-store-contract.ts';

/** A cluster of the enclosing describe's own: each describe below leaves its cluster broken in its own way. */
function ownCluster(): () => TestRedisCluster {
  let cluster: TestRedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => cluster!;
}

describe('RedisResponseStore on a Redis Cluster while a slot moves', () => {
  const cluster = ownCluster();

  it("walks a chain whose newer response has moved to the slot's new node and whose older one has not", async () => {
    const prefix = `loopgate-test:${randomUUID()}:`;
    const store = new RedisResponseStore({ url: '', clusterNodes: cluster().nodes, keyPrefix: prefix, ttlSeconds: 60, commandTimeoutMs: 2_000 });
    const nodes = cluster().nodes.map((url) => new Redis(url));
    try {
      await store.ensureWritable();
      await store.put(record('m', 'resp_1', null));
      await store.put(record('m', 'resp_2', 'resp_1'));
      const newer = `${prefix}{t:m}:r:resp_2`;
      const slot = Number(await nodes[0]!.cluster('KEYSLOT', newer));
      const ids = await Promise.all(nodes.map((node) => node.cluster('MYID') as Promise<string>));
      const ranges = (await nodes[0]!.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      const [, , [, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      const source = cluster().nodes.findIndex((node) => new URL(node).port === String(port));
      const target = (source + 1) % nodes.length;
      // A reshard in progress, key by key, as redis-cli --cluster reshard does it: the newer response moved, the older not yet.
      await nodes[target]!.cluster('SETSLOT', slot, 'IMPORTING', ids[source]!);
      await nodes[source]!.cluster('SETSLOT', slot, 'MIGRATING', ids[target]!);
      await nodes[source]!.migrate('127.0.0.1', Number(new URL(cluster().nodes[target]!).port), newer, 0, 5_000);
      const walked = await store.chain('m', 'resp_2');
      expect(walked.missing).toBeNull();
      expect(walked.turns.map((turn) => turn.responseId)).toEqual(['resp_1', 'resp_2']);
      // One truly gone is still missing.
      expect((await store.chain('m', 'resp_unknown')).missing).toBe('resp_unknown');
    } finally {
      for (const node of nodes) node.disconnect();
      await store.close();
    }
  }, 60_000);
});

/**
 * A Cluster client stays `ready` while a master that holds a tenant's slot
 * is gone (no replica took over): only commands tell. `/readyz` reads the
 * store's health, so the health must say so once commands fail.
 */
describe('RedisResponseStore on a Redis Cluster with a slot unserved', () => {
  const cluster = ownCluster();
  it('is unavailable once commands fail though the client says ready, naming why', async () => {
    const prefix = `loopgate-test:${randomUUID()}:`;
    const store = new RedisResponseStore({ url: '', clusterNodes: cluster().nodes, keyPrefix: prefix, ttlSeconds: 60, commandTimeoutMs: 500 });
    try {
      await store.ensureWritable();
      await store.put(record('t', 'resp_1', null));
      expect(store.health()).toEqual({ state: 'ready' });
      const client = store.redis as Cluster;
      const slot = Number(await client.cluster('KEYSLOT', `${prefix}{t:t}:r:x`));
      const ranges = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      const [, , [, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      await cluster().killNode(cluster().nodes.findIndex((node) => new URL(node).port === String(port)));
      await waitFor(async () => (await store.get('t', 'resp_1').then(() => false, () => true)), 10_000, 100);
      expect(store.isReady()).toBe(true);
      expect(store.health()).toEqual({ state: 'unavailable', reason: expect.any(String) });
    } finally {
      await store.close();
    }
  }, 60_000);
});
