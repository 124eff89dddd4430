import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import { restrictedRedisUser, startRedisServer } from '../support/redis.ts';
import { useTestRedis } from '../support/test-redis-hooks.ts';
import { waitFor } from '../support/wait-for.ts';
import { describeResponseStoreContract, record } from './response-store-contract.ts';

const redis = useTestRedis();

const open = (keyPrefix = redis.prefix()) => new RedisResponseStore({ url: redis.url, keyPrefix, ttlSeconds: 60, commandTimeoutMs: 1_000 });
describeResponseStoreContract('redis', async () => open(), (store) => store.close());

describe('RedisResponseStore', () => {
  it.each([
    ['may not run scripts', ['-@scripting']],
    ['may not write', ['-@write']],
    ["may not touch the gateway's keys", ['resetkeys', '~other:*']],
  ])("a Redis user that %s (managed Redis's restricted users) is found at connect: not ready, its requests refused before a model call with no retry, served once granted", async (_what, restriction) => {
    const user = await restrictedRedisUser(redis.url, ['~*', '&*', '+@all', ...restriction]);
    const errors: string[] = [];
    const log = { info: () => {}, warn: () => {}, error: (_fields: Record<string, unknown>, message: string) => void errors.push(message) };
    const store = new RedisResponseStore({ url: user.url, keyPrefix: redis.prefix(), ttlSeconds: 60, commandTimeoutMs: 1_000, log });
    try {
      // No request asked anything: the check at connect found it.
      await waitFor(() => (store.health() as { reason?: string }).reason === 'permission_denied');
      expect(store.isReady()).toBe(false);
      expect(errors).toEqual([expect.stringMatching(/lacks a permission/)]);
      // A read that goes through says nothing of the writes a stored response needs.
      await store.get('t', 'resp_absent').catch(() => null);
      expect(store.isReady()).toBe(false);
      const refused = await store.ensureWritable().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(GatewayError);
      expect(refused).toMatchObject({ status: 503, code: 'store_unavailable', headers: { 'x-should-retry': 'false' } });
      expect((refused as Error).message).toMatch(/lacks a permission/);
      expect(errors).toHaveLength(1);
      await user.setRules('+@all', 'allkeys');
      await waitFor(async () => (await store.ensureWritable().then(() => true, () => false)) && store.isReady());
      await store.put(record('t', 'resp_granted', null));
      expect((await store.get('t', 'resp_granted'))?.response.id).toBe('resp_granted');
    } finally {
      await store.close();
      await user.remove();
    }
  });

  it('a Redis at maxmemory (noeviction) is still ready: it answers, reads and store: false go on, and its probe leaves no key', async () => {
    const own = await startRedisServer();
    const raw = new Redis(own.url);
    const store = new RedisResponseStore({ url: own.url, keyPrefix: '', ttlSeconds: 60, commandTimeoutMs: 1_000 });
    try {
      await raw.set('probe', "another application's value");
      await waitFor(() => store.health().state === 'ready');
      await raw.config('SET', 'maxmemory-policy', 'noeviction');
      await raw.config('SET', 'maxmemory', '1');
      // Quiet for a second: the next readiness check probes, and the one after reads what the probe found.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      store.health();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(store.health()).toEqual({ state: 'ready' });
      expect(store.isReady()).toBe(true);
      await raw.config('SET', 'maxmemory', '0');
      // Its probe writes a key of its own, shaped as the store's, and takes it back.
      expect(await raw.keys('*')).toEqual(['probe']);
      expect(await raw.get('probe')).toBe("another application's value");
    } finally {
      await store.close();
      raw.disconnect();
      await own.stop();
    }
  });

  it('rebuilds a chain of any depth in a constant number of round trips (at most 2)', async () => {
    const store = open();
    try {
      for (let index = 0; index < 100; index++) await store.put(record('t', `resp_${index}`, index === 0 ? null : `resp_${index - 1}`));
      const sent: string[] = [];
      const original = store.redis.sendCommand.bind(store.redis);
      store.redis.sendCommand = ((command: { name: string }) => {
        sent.push(command.name);
        return original(command as never);
      }) as typeof store.redis.sendCommand;

      await store.chain('t', 'resp_0');
      const forDepthOne = sent.splice(0);
      const deep = await store.chain('t', 'resp_99');
      const forDepthHundred = sent.splice(0);
      expect(deep.turns).toHaveLength(100);
      expect(forDepthHundred.length).toBe(forDepthOne.length);
      expect(forDepthHundred.length).toBeLessThanOrEqual(2);
    } finally {
      await store.close();
    }
  });

  it('sets the TTL on every key it writes', async () => {
    const prefix = redis.prefix();
    const store = open(prefix);
    try {
      await store.put(record('t', 'resp_ttl', null));
      const keys = await store.redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThanOrEqual(2);
      for (const key of keys) {
        const ttl = await store.redis.ttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60);
      }
    } finally {
      await store.close();
    }
  });

  it('reads and deletes responses stored before index entries named their owner (ids comma-joined, entries of bare JSON)', async () => {
    const prefix = redis.prefix();
    const store = open(prefix);
    const keys = new RedisKeys(prefix);
    try {
      const old = record('t', 'resp_old', null);
      await store.put(old);
      // As the earlier release wrote them.
      await store.redis.hset(keys.response('t', 'resp_old'), 'items', 'msg_in_resp_old,msg_out_resp_old');
      await store.redis.set(keys.item('t', 'msg_in_resp_old'), JSON.stringify(old.inputItems[0]), 'EX', 60);
      await store.redis.set(keys.item('t', 'msg_out_resp_old'), JSON.stringify(old.response.output[0]), 'EX', 60);
      expect((await store.items('t', ['msg_in_resp_old'])).get('msg_in_resp_old')).toEqual(old.inputItems[0]);
      expect(await store.delete('t', 'resp_old')).toBe(true);
      expect((await store.items('t', ['msg_in_resp_old', 'msg_out_resp_old'])).size).toBe(0);
    } finally {
      await store.close();
    }
  });
});
