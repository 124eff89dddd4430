import { describe, expect, it } from 'vitest';
import { MemoryConversationStore } from '../../src/store/memory-conversation-store.ts';
import { conversation, describeConversationStoreContract, message } from './conversation-store-contract.ts';

let now = 1_000_000;
describeConversationStoreContract(
  'memory',
  async () => new MemoryConversationStore({ ttlSeconds: 60, maxEntries: 10_000, now: () => now }),
  (store) => store.close(),
  async (ms) => {
    now += ms;
  },
);

describe('MemoryConversationStore TTL', () => {
  it('expires a conversation ttlSeconds after its last write; every write renews it', async () => {
    let clock = 1_000_000;
    const store = new MemoryConversationStore({ ttlSeconds: 5, maxEntries: 10_000, now: () => clock });
    await store.create('t', conversation('conv_a'), [message('msg_1')]);
    clock += 4_000;
    expect(await store.append('t', 'conv_a', [message('msg_2')])).toBe(true);
    clock += 4_000;
    expect(await store.update('t', 'conv_a', { k: 'v' })).not.toBeNull();
    clock += 4_000;
    expect(await store.deleteItem('t', 'conv_a', 'msg_1')).toBe(true);
    clock += 4_000;
    expect(await store.claim('t', 'conv_a', 'h', 60_000)).toBe('claimed');
    await store.appendAndRelease('t', 'conv_a', 'h', [message('msg_3')]);
    clock += 4_999;
    // Reads do not renew.
    expect(await store.items('t', 'conv_a')).toEqual([message('msg_2'), message('msg_3')]);
    clock += 2;
    expect(await store.get('t', 'conv_a')).toBeNull();
    expect(await store.items('t', 'conv_a')).toBeNull();
    expect(await store.claim('t', 'conv_a', 'h', 60_000)).toBe('conversation_not_found');
  });
});

describe('MemoryConversationStore bounds', () => {
  it('gives back the memory of expired conversations nobody reads again (the sweep), keeping the live ones', async () => {
    let clock = 1_000_000;
    const store = new MemoryConversationStore({ ttlSeconds: 5, maxEntries: 10_000, now: () => clock });
    for (let index = 0; index < 100; index++) await store.create('t', conversation(`conv_old_${index}`), [message(`msg_${index}`)]);
    clock += 3_000;
    await store.create('t', conversation('conv_new'), []);
    // An old one written again lives on, whatever the order it was created in.
    expect(await store.append('t', 'conv_old_0', [message('msg_again')])).toBe(true);
    clock += 2_500;
    store.sweep();
    expect(store.size).toBe(2);
    expect(await store.get('t', 'conv_new')).not.toBeNull();
    expect(await store.items('t', 'conv_old_0')).toEqual([message('msg_0'), message('msg_again')]);
    await store.close();
  });

  it('keeps at most maxEntries: the least recently written go first, never one a response is writing to', async () => {
    const store = new MemoryConversationStore({ ttlSeconds: 600, maxEntries: 3 });
    for (const id of ['conv_a', 'conv_b', 'conv_c']) await store.create('t', conversation(id), []);
    expect(await store.claim('t', 'conv_a', 'response-1', 60_000)).toBe('claimed');
    await store.append('t', 'conv_b', [message('msg_b')]);
    await store.create('t', conversation('conv_d'), []);
    // conv_a is the oldest write but held by a running response; conv_c is the next oldest.
    expect(store.size).toBe(3);
    expect(await store.get('t', 'conv_c')).toBeNull();
    for (const id of ['conv_a', 'conv_b', 'conv_d']) expect(await store.get('t', id), id).not.toBeNull();
    await store.appendAndRelease('t', 'conv_a', 'response-1', [message('msg_a')]);
    expect(await store.items('t', 'conv_a')).toEqual([message('msg_a')]);
    await store.close();
  });
});
