import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { ConversationStore } from '../../src/store/conversation-store.ts';
import { connectRedis } from '../../src/store/redis-client.ts';
import { RedisConversationStore } from '../../src/store/redis-conversation-store.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { startRedisServer } from '../support/redis.ts';
import { useTestRedis } from '../support/test-redis-hooks.ts';
import { conversation, describeConversationStoreContract, message } from './conversation-store-contract.ts';

const redis = useTestRedis();

const open = (keyPrefix = redis.prefix(), ttlSeconds = 60) =>
  new RedisConversationStore({ client: connectRedis({ url: redis.url, commandTimeoutMs: 2_000 }), keys: new RedisKeys(keyPrefix), ttlSeconds, ownsClient: true });
describeConversationStoreContract(
  'redis',
  async () => open(),
  (store: ConversationStore) => store.close(),
  (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
);

describe('RedisConversationStore', () => {
  const withRaw = async (body: (raw: Redis) => Promise<void>) => {
    const raw = new Redis(redis.url);
    try {
      await body(raw);
    } finally {
      raw.disconnect();
    }
  };

  it('a conversation that lost its order or its items (a Redis evicting keys one at a time) is not found, never one with no history', () =>
    withRaw(async (raw) => {
      const prefix = redis.prefix();
      const keys = new RedisKeys(prefix);
      const store = open(prefix);
      try {
        for (const [id, lost] of [['conv_o', keys.conversationOrder('t', 'conv_o')], ['conv_i', keys.conversationItems('t', 'conv_i')]] as const) {
          await store.create('t', conversation(id, {}), [message('msg_1'), message('msg_2')]);
          await store.append('t', id, [message('msg_3')]);
          await store.deleteItem('t', id, 'msg_1');
          expect((await store.items('t', id))?.map((item) => item.id)).toEqual(['msg_2', 'msg_3']);
          await raw.del(lost);
          expect(await store.get('t', id)).toBeNull();
          expect(await store.items('t', id)).toBeNull();
          expect(await store.page('t', id, { limit: 20, order: 'asc' })).toEqual({ kind: 'conversation_not_found' });
          expect(await store.item('t', id, 'msg_2')).toBeNull();
          expect(await store.append('t', id, [message('msg_4')])).toBe(false);
          expect(await store.update('t', id, { k: 'v' })).toBeNull();
          expect(await store.deleteItem('t', id, 'msg_2')).toBe(false);
        }
        // Both gone: the mark went with the items.
        await store.create('t', conversation('conv_b', {}), [message('msg_1')]);
        await raw.del(keys.conversationOrder('t', 'conv_b'), keys.conversationItems('t', 'conv_b'));
        expect(await store.items('t', 'conv_b')).toBeNull();
        // One written before marks were kept is read as it is (and marked by the next write).
        await store.create('t', conversation('conv_old', {}), [message('msg_1')]);
        await raw.hdel(keys.conversation('t', 'conv_old'), 'marked');
        await raw.hdel(keys.conversationItems('t', 'conv_old'), Buffer.from([0xff]));
        expect((await store.items('t', 'conv_old'))?.map((item) => item.id)).toEqual(['msg_1']);
        expect(await store.update('t', 'conv_old', { k: 'v' })).not.toBeNull();
        await raw.del(keys.conversationOrder('t', 'conv_old'), keys.conversationItems('t', 'conv_old'));
        expect(await store.get('t', 'conv_old')).toBeNull();
        // A replica of that version, during a rolling update, appends and deletes items as it did (the mark untouched): still whole, emptied too.
        await store.create('t', conversation('conv_rolling', {}), [message('msg_1')]);
        await raw.rpush(keys.conversationOrder('t', 'conv_rolling'), 'msg_2');
        await raw.hset(keys.conversationItems('t', 'conv_rolling'), 'msg_2', JSON.stringify(message('msg_2')));
        expect((await store.items('t', 'conv_rolling'))?.map((item) => item.id)).toEqual(['msg_1', 'msg_2']);
        for (const id of ['msg_1', 'msg_2']) {
          await raw.hdel(keys.conversationItems('t', 'conv_rolling'), id);
          await raw.lrem(keys.conversationOrder('t', 'conv_rolling'), 0, id);
        }
        expect(await store.items('t', 'conv_rolling')).toEqual([]);
        expect(await store.get('t', 'conv_rolling')).not.toBeNull();
        expect(await store.append('t', 'conv_rolling', [message('msg_3')])).toBe(true);
        // Every item deleted by this version: an empty conversation, whole.
        await store.deleteItem('t', 'conv_rolling', 'msg_3');
        expect(await store.items('t', 'conv_rolling')).toEqual([]);
      } finally {
        await store.close();
      }
    }));

  it('keeps a conversation in the keys RedisKeys names, all with the TTL, renewed by each write', () =>
    withRaw(async (raw) => {
      const prefix = redis.prefix();
      const keys = new RedisKeys(prefix);
      const store = open(prefix, 100);
      try {
        await store.create('t', conversation('conv_a', { k: 'v' }), [message('msg_1'), message('msg_2')]);
        expect(await raw.hgetall(keys.conversation('t', 'conv_a'))).toEqual({ created_at: '1700000000', metadata: '{"k":"v"}', marked: '1' });
        expect(await raw.lrange(keys.conversationOrder('t', 'conv_a'), 0, -1)).toEqual(['msg_1', 'msg_2']);
        // The items, and the mark that tells an emptied conversation from one whose items were evicted.
        expect((await raw.hkeysBuffer(keys.conversationItems('t', 'conv_a'))).map((field) => field.toString('latin1')).sort()).toEqual(['msg_1', 'msg_2', '\xff']);
        const conversationKeys = [keys.conversation('t', 'conv_a'), keys.conversationOrder('t', 'conv_a'), keys.conversationItems('t', 'conv_a')];
        for (const key of conversationKeys) {
          const ttl = await raw.ttl(key);
          expect(ttl).toBeGreaterThan(90);
          expect(ttl).toBeLessThanOrEqual(100);
        }
        for (const key of conversationKeys) await raw.expire(key, 10);
        await store.append('t', 'conv_a', [message('msg_3')]);
        for (const key of conversationKeys) expect(await raw.ttl(key)).toBeGreaterThan(90);
        for (const key of conversationKeys) await raw.expire(key, 10);
        await store.update('t', 'conv_a', {});
        for (const key of conversationKeys) expect(await raw.ttl(key)).toBeGreaterThan(90);
        for (const key of conversationKeys) await raw.expire(key, 10);
        await store.deleteItem('t', 'conv_a', 'msg_1');
        for (const key of conversationKeys) expect(await raw.ttl(key)).toBeGreaterThan(90);

        expect(await store.claim('t', 'conv_a', 'holder-1', 5_000)).toBe('claimed');
        expect(await raw.get(keys.conversationLock('t', 'conv_a'))).toBe('holder-1');
        const pttl = await raw.pttl(keys.conversationLock('t', 'conv_a'));
        expect(pttl).toBeGreaterThan(4_000);
        expect(pttl).toBeLessThanOrEqual(5_000);
        for (const key of conversationKeys) await raw.expire(key, 10);
        await store.appendAndRelease('t', 'conv_a', 'holder-1', [message('msg_4')]);
        expect(await raw.exists(keys.conversationLock('t', 'conv_a'))).toBe(0);
        for (const key of conversationKeys) expect(await raw.ttl(key)).toBeGreaterThan(90);

        await store.claim('t', 'conv_a', 'holder-2', 5_000);
        expect(await store.delete('t', 'conv_a')).toBe(true);
        expect(await raw.exists(...conversationKeys, keys.conversationLock('t', 'conv_a'))).toBe(0);
      } finally {
        await store.close();
      }
    }));

  it('all keys of a conversation share one cluster slot (hash tag of the tenant)', () => {
    const keys = new RedisKeys('p:');
    const all = [keys.conversation('t', 'c'), keys.conversationOrder('t', 'c'), keys.conversationItems('t', 'c'), keys.conversationLock('t', 'c')];
    for (const key of all) expect(key).toContain('{t:t}');
  });

  it('each operation is one round trip (a script or one command)', async () => {
    const store = open();
    try {
      await store.create('t', conversation('conv_a'), [message('msg_1')]);
      const sent: string[] = [];
      const client = store.redis as Redis;
      const original = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string }) => {
        sent.push(command.name);
        return original(command as never);
      }) as typeof client.sendCommand;
      const operations: [string, () => Promise<unknown>][] = [
        ['append', () => store.append('t', 'conv_a', [message('msg_2'), message('msg_3')])],
        ['page', () => store.page('t', 'conv_a', { limit: 2, order: 'desc', after: 'msg_3' })],
        ['items', () => store.items('t', 'conv_a')],
        ['item', () => store.item('t', 'conv_a', 'msg_2')],
        ['deleteItem', () => store.deleteItem('t', 'conv_a', 'msg_2')],
        ['claim', () => store.claim('t', 'conv_a', 'h', 1_000)],
        ['appendAndRelease', () => store.appendAndRelease('t', 'conv_a', 'h', [message('msg_4')])],
        ['release', () => store.release('t', 'conv_a', 'h')],
        ['update', () => store.update('t', 'conv_a', { a: 'b' })],
        ['get', () => store.get('t', 'conv_a')],
        ['delete', () => store.delete('t', 'conv_a')],
      ];
      for (const [name, run] of operations) {
        sent.length = 0;
        await run();
        // A script not yet cached on the server costs an EVALSHA that fails, then its EVAL: count the successful one.
        expect({ name, sent: sent.filter((command) => command !== 'evalsha' || !sent.includes('eval')).length }).toEqual({ name, sent: 1 });
      }
    } finally {
      await store.close();
    }
  });

  it('fails with 503 store_unavailable when Redis cannot be reached', async () => {
    const client = connectRedis({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200 });
    client.on('error', () => {});
    const store = new RedisConversationStore({ client, keys: new RedisKeys('p:'), ttlSeconds: 60, ownsClient: true, readyWaitMs: 100 });
    try {
      const error = await store.get('t', 'conv_a').catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 503, code: 'store_unavailable' });
      await expect(store.appendAndRelease('t', 'conv_a', 'h', [message('m')])).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
    } finally {
      await store.close();
    }
  });

  it('does not close a client it does not own', async () => {
    const client = connectRedis({ url: redis.url, commandTimeoutMs: 2_000 });
    const store = new RedisConversationStore({ client, keys: new RedisKeys(redis.prefix()), ttlSeconds: 60 });
    await store.create('t', conversation('conv_a'), []);
    await store.close();
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });
});

describe('RedisConversationStore at maxmemory (noeviction)', () => {
  it('creating a conversation is refused as every other write is, not written past the limit', async () => {
    const own = await startRedisServer();
    const raw = new Redis(own.url);
    const store = new RedisConversationStore({ client: connectRedis({ url: own.url, commandTimeoutMs: 2_000 }), keys: new RedisKeys('p:'), ttlSeconds: 60, ownsClient: true });
    try {
      await raw.config('SET', 'maxmemory-policy', 'noeviction');
      await raw.config('SET', 'maxmemory', '1');
      await expect(raw.set('probe', 'x')).rejects.toThrow(/OOM/);
      const created = await store.create('t', conversation('conv_big', {}), [message('msg_1')]).then(() => 'written', (error: unknown) => String(error));
      expect(created).toMatch(/OOM|unavailable/);
      await raw.config('SET', 'maxmemory', '0');
      expect(await store.get('t', 'conv_big')).toBeNull();
    } finally {
      await store.close();
      raw.disconnect();
      await own.stop();
    }
  });
});
