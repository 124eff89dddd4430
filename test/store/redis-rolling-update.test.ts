import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import { holderBeforeJson, itemsCommaJoined } from '../support/earlier-redis-response-scripts.ts';
import { useTestRedis } from '../support/test-redis-hooks.ts';
import { record } from './response-store-contract.ts';

const redis = useTestRedis();

/**
 * A rolling update: replicas of an earlier version and of this one share the
 * Redis for as long as the deployment rolls. What this version writes is read
 * and deleted rightly by the earlier ones (their reads used to fail as
 * invalid JSON, and their deletes left a deleted response's items readable
 * by `item_reference` until the TTL), and what they wrote by this one.
 */
describe('stored responses across a rolling update (replicas of earlier versions on the same Redis)', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(redis.url);
  });
  afterAll(() => client.disconnect());

  function open() {
    const prefix = redis.prefix();
    const keys = new RedisKeys(prefix);
    const store = new RedisResponseStore({ url: redis.url, keyPrefix: prefix, ttlSeconds: 60, commandTimeoutMs: 1_000 });
    const where = (tenant: string) => ({ responsePrefix: keys.responsePrefix(tenant), itemPrefix: keys.itemPrefix(tenant) });
    return { store, keys, where };
  }

  for (const earlier of [itemsCommaJoined, holderBeforeJson]) {
    it(`a replica ${earlier.name} reads the items this version stored, and deleting the response there leaves none readable anywhere`, async () => {
      const { store, keys, where } = open();
      try {
        const stored = record('t', 'resp_new', null);
        await store.put(stored);
        expect(await earlier.readItem(client, keys.item('t', 'msg_in_resp_new'))).toEqual(stored.inputItems[0]);
        expect(await earlier.readItem(client, keys.item('t', 'msg_out_resp_new'))).toEqual(stored.response.output[0]);
        expect(await earlier.deleteResponse(client, { response: keys.response('t', 'resp_new'), ...where('t') }, 'resp_new')).toBe(1);
        expect((await store.items('t', ['msg_in_resp_new', 'msg_out_resp_new'])).size).toBe(0);
        expect(await store.get('t', 'resp_new')).toBeNull();
      } finally {
        await store.close();
      }
    });
  }

  it('an item resent across versions goes back to its earlier holder when the later one is deleted, whichever version deletes', async () => {
    const { store, keys, where } = open();
    try {
      // Held first by a response of the version of 2026-11-28, then taken over by one of this version (a client resent it).
      const first = record('t', 'resp_first', null);
      await holderBeforeJson.put(client, { response: keys.response('t', 'resp_first'), item: (id) => keys.item('t', id) }, first);
      const second = record('t', 'resp_second', null);
      second.inputItems = first.inputItems;
      await store.put(second);
      expect(await store.delete('t', 'resp_second')).toBe(true);
      expect((await store.items('t', ['msg_in_resp_first'])).get('msg_in_resp_first')).toEqual(first.inputItems[0]);
      // And the earlier version deletes its own, the item with it.
      expect(await holderBeforeJson.deleteResponse(client, { response: keys.response('t', 'resp_first'), ...where('t') }, 'resp_first')).toBe(1);
      expect((await store.items('t', ['msg_in_resp_first'])).size).toBe(0);

      // Taken over the other way: this version's item resent by the earlier version; deleting that one gives it back here.
      const mine = record('t', 'resp_mine', null);
      await store.put(mine);
      const theirs = record('t', 'resp_theirs', null);
      theirs.inputItems = mine.inputItems;
      await holderBeforeJson.put(client, { response: keys.response('t', 'resp_theirs'), item: (id) => keys.item('t', id) }, theirs);
      // This version, deleting its own, leaves the entry the other holds.
      expect(await store.delete('t', 'resp_mine')).toBe(true);
      expect((await store.items('t', ['msg_in_resp_mine'])).get('msg_in_resp_mine')).toEqual(mine.inputItems[0]);
      expect(await store.delete('t', 'resp_theirs')).toBe(true);
      expect((await store.items('t', ['msg_in_resp_mine'])).size).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("item ids with a comma cost the earlier versions' deletes that item alone, as their own did; a first id starting with '[' is listed as the JSON array the 2026-11-28 version then reads", async () => {
    const { store, keys, where } = open();
    try {
      for (const earlier of [itemsCommaJoined, holderBeforeJson]) {
        const id = `resp_comma_${earlier === itemsCommaJoined ? 'a' : 'b'}`;
        const stored = record('t', id, null);
        stored.inputItems = [{ ...stored.inputItems[0]!, id: `msg_a,b_${id}` }];
        await store.put(stored);
        expect(await earlier.deleteResponse(client, { response: keys.response('t', id), ...where('t') }, id)).toBe(1);
        expect([...(await store.items('t', [`msg_a,b_${id}`, `msg_out_${id}`])).keys()]).toEqual([`msg_a,b_${id}`]);
      }
      const bracket = record('t', 'resp_bracket', null);
      bracket.inputItems = [{ ...bracket.inputItems[0]!, id: '[msg' }];
      await store.put(bracket);
      expect(await client.hget(keys.response('t', 'resp_bracket'), 'items')).toBe(JSON.stringify(['[msg', 'msg_out_resp_bracket']));
      expect(await holderBeforeJson.deleteResponse(client, { response: keys.response('t', 'resp_bracket'), ...where('t') }, 'resp_bracket')).toBe(1);
      expect((await store.items('t', ['[msg', 'msg_out_resp_bracket'])).size).toBe(0);
    } finally {
      await store.close();
    }
  });
});
