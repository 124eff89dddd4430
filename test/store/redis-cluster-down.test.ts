import { randomUUID } from 'node:crypto';
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sendCommand } from '../../src/store/redis-client.ts';
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

/** A store on the cluster, under a prefix of its own, and a client to each node, for the test's body; all closed after. */
async function onCluster(cluster: TestRedisCluster, body: (on: { store: RedisResponseStore; nodes: Redis[]; prefix: string }) => Promise<void>): Promise<void> {
  const prefix = `loopgate-test:${randomUUID()}:`;
  const store = new RedisResponseStore({ url: '', clusterNodes: cluster.nodes, keyPrefix: prefix, ttlSeconds: 60, commandTimeoutMs: 2_000 });
  const nodes = cluster.nodes.map((url) => new Redis(url));
  try {
    await store.ensureWritable();
    await body({ store, nodes, prefix });
  } finally {
    for (const node of nodes) node.disconnect();
    await store.close();
  }
}

describe('RedisResponseStore on a Redis Cluster while a slot moves', () => {
  const cluster = ownCluster();

  it("walks a chain whose newer response has moved to the slot's new node and whose older one has not", async () => {
    await onCluster(cluster(), async ({ store, nodes, prefix }) => {
      await store.put(record('m', 'resp_1', null));
      await store.put(record('m', 'resp_2', 'resp_1'));
      const newer = `${prefix}{t:m}:r:resp_2`;
      // A reshard in progress, key by key, as redis-cli --cluster reshard does it: the newer response moved, the older not yet.
      const slot = await slotOf(cluster(), nodes, newer);
      await slot.startMoving();
      await slot.moveKeys([newer]);
      const walked = await store.chain('m', 'resp_2');
      expect(walked.missing).toBeNull();
      expect(walked.turns.map((turn) => turn.responseId)).toEqual(['resp_1', 'resp_2']);
      // One truly gone is still missing.
      expect((await store.chain('m', 'resp_unknown')).missing).toBe('resp_unknown');
    });
  }, 60_000);
});

/** The node serving `key`'s slot, and every node's id, for moving that slot by hand as `redis-cli --cluster reshard` does. */
async function slotOf(cluster: TestRedisCluster, nodes: Redis[], key: string) {
  const slot = Number(await nodes[0]!.cluster('KEYSLOT', key));
  const ids = await Promise.all(nodes.map((node) => node.cluster('MYID') as Promise<string>));
  const ranges = (await nodes[0]!.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  const [, , [, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
  const source = cluster.nodes.findIndex((node) => new URL(node).port === String(port));
  const target = (source + 1) % nodes.length;
  const targetPort = Number(new URL(cluster.nodes[target]!).port);
  return {
    /** A tenant whose keys are on the same node as `key`'s, in another slot. */
    neighbour: async (keyOf: (tenant: string) => string) => {
      for (let index = 0; ; index++) {
        const other = Number(await nodes[0]!.cluster('KEYSLOT', keyOf(`n${index}`)));
        const [, , [, otherPort]] = ranges.find(([from, to]) => other >= from && other <= to)!;
        if (other !== slot && otherPort === port) return `n${index}`;
      }
    },
    /** Marks the slot as moving from its node to the next one. */
    startMoving: async () => {
      await nodes[target]!.cluster('SETSLOT', slot, 'IMPORTING', ids[source]!);
      await nodes[source]!.cluster('SETSLOT', slot, 'MIGRATING', ids[target]!);
    },
    moveKeys: async (keys: string[]) => {
      for (const key of keys) await nodes[source]!.migrate('127.0.0.1', targetPort, key, 0, 5_000);
    },
    /** Moves what is left and gives the slot to its new node, on every node. */
    finish: async () => {
      for (;;) {
        const left = (await nodes[source]!.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        if (left.length === 0) break;
        await nodes[source]!.migrate('127.0.0.1', targetPort, '', 0, 5_000, 'KEYS', ...left);
      }
      for (const node of nodes) await node.cluster('SETSLOT', slot, 'NODE', ids[target]!);
    },
  };
}

describe('RedisResponseStore on a Redis Cluster whose slots move under it', () => {
  const cluster = ownCluster();

  it("a write after its tenant's slot moved to another node follows it there (MOVED), and so does a read", async () => {
    await onCluster(cluster(), async ({ store, nodes, prefix }) => {
      await store.put(record('moved', 'resp_1', null));
      const slot = await slotOf(cluster(), nodes, `${prefix}{t:moved}:r:resp_1`);
      await slot.startMoving();
      await slot.finish();
      // The store's slot map still names the old node; other tenants' writes go to that node at the same moment.
      const neighbour = await slot.neighbour((tenant) => `${prefix}{t:${tenant}}:r:x`);
      await Promise.all([store.put(record('moved', 'resp_2', 'resp_1')), ...Array.from({ length: 5 }, (_, index) => store.put(record(neighbour, `resp_n${index}`, null)))]);
      expect((await store.chain('moved', 'resp_2')).turns.map((turn) => turn.responseId)).toEqual(['resp_1', 'resp_2']);
    });
  }, 60_000);

  it('a command a replica refused (READONLY: the slot map named a node that is a replica now) is sent again once the map is read afresh', async () => {
    const store = new RedisResponseStore({ url: '', clusterNodes: cluster().nodes, keyPrefix: `loopgate-test:${randomUUID()}:`, ttlSeconds: 60, commandTimeoutMs: 2_000 });
    try {
      await store.ensureWritable();
      const client = store.redis as Cluster;
      const refresh = vi.spyOn(client, 'refreshSlotsCache');
      let sent = 0;
      const answer = await sendCommand(client, async () => {
        sent++;
        if (sent === 1) throw new Error("READONLY You can't write against a read only replica.");
        return 'written';
      });
      expect(answer).toBe('written');
      expect(sent).toBe(2);
      expect(refresh).toHaveBeenCalledTimes(1);
      // Any other refusal is the caller's, as it came.
      await expect(sendCommand(client, async () => Promise.reject(new Error('WRONGTYPE Operation against a key holding the wrong kind of value')))).rejects.toThrow(/WRONGTYPE/);
      expect(refresh).toHaveBeenCalledTimes(1);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('a write while its slot is half moved waits for the move (TRYAGAIN) and lands once it is done', async () => {
    await onCluster(cluster(), async ({ store, nodes, prefix }) => {
      const written = record('half', 'resp_1', null);
      await store.put(written);
      const slot = await slotOf(cluster(), nodes, `${prefix}{t:half}:r:resp_1`);
      await slot.startMoving();
      // The response moved, its items not yet: a write of all of them finds some keys here and some gone.
      await slot.moveKeys([`${prefix}{t:half}:r:resp_1`]);
      const finished = new Promise<void>((resolve, reject) => setTimeout(() => slot.finish().then(resolve, reject), 300));
      // Writes of other tenants on the same node, at the same moment, as under load: they land at once whatever the moving slot does.
      const neighbour = await slot.neighbour((tenant) => `${prefix}{t:${tenant}}:r:x`);
      const others = Array.from({ length: 5 }, (_, index) => record(neighbour, `resp_n${index}`, null));
      await Promise.all([store.put(written), ...others.map((other) => store.put(other))]);
      await finished;
      expect(await store.get('half', 'resp_1')).toEqual(written);
      for (const other of others) expect(await store.get(neighbour, other.response.id)).toEqual(other);
    });
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
