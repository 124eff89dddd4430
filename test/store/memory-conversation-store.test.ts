import { describe, expect, it } from 'vitest';
import { MemoryConversationStore } from '../../src/store/memory-conversation-store.ts';
import { conversation, describeConversationStoreContract, message } from './conversation-store-contract.ts';

let now = 1_000_000;
describeConversationStoreContract(
  'memory',
  async () => new MemoryConversationStore({ ttlSeconds: 60, now: () => now }),
  (store) => store.close(),
  async (ms) => {
    now += ms;
  },
);

describe('MemoryConversationStore TTL', () => {
  it('expires a conversation ttlSeconds after its last write; every write renews it', async () => {
    let clock = 1_000_000;
    const store = new MemoryConversationStore({ ttlSeconds: 5, now: () => clock });
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
