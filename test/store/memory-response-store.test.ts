import { describe, expect, it } from 'vitest';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { describeResponseStoreContract, record } from './response-store-contract.ts';

describeResponseStoreContract('memory', async () => new MemoryResponseStore({ maxEntries: 1_000, ttlSeconds: 60 }), (store) => store.close());

describe('MemoryResponseStore bounds', () => {
  it('evicts the least recently used entry beyond maxEntries', async () => {
    const store = new MemoryResponseStore({ maxEntries: 2, ttlSeconds: 60 });
    await store.put(record('t', 'resp_1', null));
    await store.put(record('t', 'resp_2', null));
    await store.get('t', 'resp_1');
    await store.put(record('t', 'resp_3', null));
    expect(await store.get('t', 'resp_2')).toBeNull();
    expect(await store.get('t', 'resp_1')).not.toBeNull();
    expect(await store.get('t', 'resp_3')).not.toBeNull();
    expect((await store.items('t', ['msg_in_resp_2'])).size).toBe(0);
  });

  it('expires entries after the TTL', async () => {
    let now = 1_000_000;
    const store = new MemoryResponseStore({ maxEntries: 10, ttlSeconds: 5, now: () => now });
    await store.put(record('t', 'resp_1', null));
    now += 4_999;
    expect(await store.get('t', 'resp_1')).not.toBeNull();
    now += 2;
    expect(await store.get('t', 'resp_1')).toBeNull();
  });
});
