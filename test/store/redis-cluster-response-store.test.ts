import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { describeResponseStoreContract, record } from './response-store-contract.ts';

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const open = (keyPrefix = `loopgate-test:${randomUUID()}:`) =>
  new RedisResponseStore({ url: '', clusterNodes: cluster.nodes, keyPrefix, ttlSeconds: 60, commandTimeoutMs: 2_000 });

/** A store whose cluster client is connected (the contract writes at once; the store waits for readiness anyway). */
const ready = async (store: RedisResponseStore) => {
  await store.ensureWritable();
  expect(store.isReady()).toBe(true);
  expect(store.health()).toEqual({ state: 'ready' });
  return store;
};

describeResponseStoreContract('redis cluster', async () => ready(open()), (store) => store.close());

/** Which master (`host:port`) serves each slot, from CLUSTER SLOTS. */
async function slotOwners(client: Cluster): Promise<(slot: number) => string> {
  const ranges = await client.cluster('SLOTS');
  return (slot) => {
    const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to) ?? [];
    if (!master) throw new Error(`slot ${slot} unserved`);
    return `${master[0]}:${master[1]}`;
  };
}

async function keysByNode(client: Cluster, pattern: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const node of client.nodes('master') as Redis[]) {
    const keys = await node.keys(pattern);
    if (keys.length > 0) found.set(`${node.options.host}:${node.options.port}`, keys.sort());
  }
  return found;
}

describe('RedisResponseStore on a Redis Cluster', () => {
  it('keeps each tenant in one slot, and tenants in other slots on other nodes', async () => {
    const prefix = `loopgate-test:${randomUUID()}:`;
    const store = await ready(open(prefix));
    try {
      const client = store.redis as Cluster;
      expect(client).toBeInstanceOf(Cluster);
      const owner = await slotOwners(client);
      const slotOf = async (tenant: string) => Number(await client.cluster('KEYSLOT', `${prefix}{t:${tenant}}:r:x`));
      // Two tenants whose hash tags fall on different masters.
      const first = 'tenant-0';
      const firstNode = owner(await slotOf(first));
      let second = '';
      for (let index = 1; !second; index++) {
        if (owner(await slotOf(`tenant-${index}`)) !== firstNode) second = `tenant-${index}`;
      }
      const secondNode = owner(await slotOf(second));
      expect(secondNode).not.toBe(firstNode);

      for (const tenant of [first, second]) {
        await store.put(record(tenant, 'resp_1', null));
        await store.put(record(tenant, 'resp_2', 'resp_1'));
      }

      for (const [tenant, node] of [[first, firstNode], [second, secondNode]] as const) {
        const byNode = await keysByNode(client, `${prefix}{t:${tenant}}:*`);
        // Both responses, their four items and each item's holder, all on the node that owns the tenant's slot.
        expect([...byNode.keys()]).toEqual([node]);
        const keys = byNode.get(node)!;
        expect(keys).toHaveLength(10);
        const slots = new Set(await Promise.all(keys.map(async (key) => Number(await client.cluster('KEYSLOT', key)))));
        expect(slots.size).toBe(1);
        // The chain script and the multi-key item read work in that slot.
        const chain = await store.chain(tenant, 'resp_2');
        expect(chain.turns.map((turn) => turn.responseId)).toEqual(['resp_1', 'resp_2']);
        expect(chain.missing).toBeNull();
        expect([...(await store.items(tenant, ['msg_in_resp_1', 'msg_out_resp_2'])).keys()]).toEqual(['msg_in_resp_1', 'msg_out_resp_2']);
      }
      expect(await store.delete(first, 'resp_1')).toBe(true);
      expect((await keysByNode(client, `${prefix}{t:${first}}:*`)).get(firstNode)).toHaveLength(5);
      expect(await store.get(second, 'resp_1')).not.toBeNull();
      // Clean up the rest.
      for (const tenant of [first, second]) for (const id of ['resp_1', 'resp_2']) await store.delete(tenant, id);
      expect((await keysByNode(client, `${prefix}*`)).size).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('walks a 500-deep previous_response_id chain in one script on the cluster', async () => {
    const store = await ready(open());
    try {
      for (let index = 0; index < 500; index++) await store.put(record('deep', `resp_${index}`, index === 0 ? null : `resp_${index - 1}`));
      const sent: { name: string; args: unknown[] }[] = [];
      const original = store.redis.sendCommand.bind(store.redis);
      store.redis.sendCommand = ((command: { name: string; args: unknown[] }) => {
        sent.push({ name: command.name, args: command.args });
        return original(command as never);
      }) as typeof store.redis.sendCommand;

      const chain = await store.chain('deep', 'resp_499');
      expect(chain.missing).toBeNull();
      expect(chain.turns).toHaveLength(500);
      expect(chain.turns[0]!.responseId).toBe('resp_0');
      expect(chain.turns[499]!.responseId).toBe('resp_499');
      // One EVALSHA (or EVAL after a NOSCRIPT on a node that has not seen the script), routed by its one declared key.
      expect(sent.length).toBeLessThanOrEqual(2);
      for (const command of sent) {
        expect(['evalsha', 'eval']).toContain(command.name);
        expect(String(command.args[1])).toBe('1');
      }
      const missing = await store.chain('deep', 'resp_unknown');
      expect(missing).toEqual({ turns: [], missing: 'resp_unknown' });
      for (let index = 0; index < 500; index++) await store.delete('deep', `resp_${index}`);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('reports a cluster it cannot reach as unavailable and refuses commands within the timeout', async () => {
    const store = new RedisResponseStore({ url: '', clusterNodes: ['redis://127.0.0.1:1'], keyPrefix: 'x:', ttlSeconds: 60, commandTimeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(store.ensureWritable()).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
      await expect(store.get('t', 'resp_x')).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
      // Each waits at most one command timeout for the connection, then fails (no offline queue).
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(store.isReady()).toBe(false);
      // ioredis asks a seed for its slots on a throwaway connection and reports only "Connection is closed.", not the refusal.
      expect(store.health()).toEqual({ state: 'unavailable', reason: expect.stringMatching(/^(connection_refused|error)$/) });
    } finally {
      await store.close();
    }
  });
});
