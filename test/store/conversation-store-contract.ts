import { describe, expect, it } from 'vitest';
import type { ConversationStore, StoredConversation } from '../../src/store/conversation-store.ts';
import type { StoredItem } from '../../src/store/response-store.ts';

export function message(id: string, text = id): StoredItem {
  return { id, type: 'message', role: 'user', content: text };
}

export function conversation(id: string, metadata: Record<string, string> = {}): StoredConversation {
  return { id, created_at: 1_700_000_000, metadata };
}

const ids = (items: readonly StoredItem[] | null) => items?.map((item) => item.id) ?? null;

/**
 * The behaviour every ConversationStore must have, run against each
 * implementation. `create` returns a fresh, empty store; `sleep` lets time pass
 * (real or simulated) so leases can lapse.
 */
export function describeConversationStoreContract(name: string, create: () => Promise<ConversationStore>, release: (store: ConversationStore) => Promise<void>, sleep: (ms: number) => Promise<void>): void {
  describe(`ConversationStore contract: ${name}`, () => {
    const withStore = async (body: (store: ConversationStore) => Promise<void>) => {
      const store = await create();
      try {
        await body(store);
      } finally {
        await release(store);
      }
    };

    it('creates, reads, updates and deletes a conversation with its items', () =>
      withStore(async (store) => {
        const items: StoredItem[] = [message('msg_1', 'hello'), { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' } as StoredItem];
        await store.create('t', conversation('conv_a', { topic: 'x' }), items);
        expect(await store.get('t', 'conv_a')).toEqual(conversation('conv_a', { topic: 'x' }));
        expect(await store.items('t', 'conv_a')).toEqual(items);
        expect(await store.item('t', 'conv_a', 'fc_1')).toEqual(items[1]);
        expect(await store.item('t', 'conv_a', 'msg_unknown')).toBeNull();

        expect(await store.update('t', 'conv_a', { topic: 'y', more: 'z' })).toEqual(conversation('conv_a', { topic: 'y', more: 'z' }));
        expect(await store.get('t', 'conv_a')).toEqual(conversation('conv_a', { topic: 'y', more: 'z' }));
        expect(await store.update('t', 'conv_a', {})).toEqual(conversation('conv_a'));
        expect(await store.items('t', 'conv_a')).toEqual(items);

        expect(await store.delete('t', 'conv_a')).toBe(true);
        expect(await store.get('t', 'conv_a')).toBeNull();
        expect(await store.items('t', 'conv_a')).toBeNull();
        expect(await store.item('t', 'conv_a', 'msg_1')).toBeNull();
        expect(await store.delete('t', 'conv_a')).toBe(false);
        expect(await store.update('t', 'conv_a', { a: 'b' })).toBeNull();
        expect(await store.append('t', 'conv_a', [message('msg_2')])).toBe(false);
      }));

    it('a deleted conversation recreated with the same id starts empty', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), [message('msg_1')]);
        await store.delete('t', 'conv_a');
        await store.create('t', conversation('conv_a'), []);
        expect(await store.items('t', 'conv_a')).toEqual([]);
        expect((await store.page('t', 'conv_a', { limit: 10, order: 'asc' })) as unknown).toEqual({ kind: 'page', items: [], hasMore: false });
      }));

    it('reads return copies: changing them changes nothing stored', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a', { k: 'v' }), [message('msg_1', 'hello')]);
        const read = (await store.get('t', 'conv_a'))!;
        read.metadata.k = 'changed';
        const items = (await store.items('t', 'conv_a'))!;
        (items[0] as { content: string }).content = 'changed';
        expect((await store.get('t', 'conv_a'))!.metadata).toEqual({ k: 'v' });
        expect(await store.item('t', 'conv_a', 'msg_1')).toEqual(message('msg_1', 'hello'));
      }));

    it('appends at the end, in order; an id already present moves to the end, once', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), [message('msg_1')]);
        expect(await store.append('t', 'conv_a', [message('msg_2'), message('msg_3')])).toBe(true);
        expect(await store.append('t', 'conv_a', [message('msg_4')])).toBe(true);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_1', 'msg_2', 'msg_3', 'msg_4']);
        await store.append('t', 'conv_a', [message('msg_2', 'again')]);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_1', 'msg_3', 'msg_4', 'msg_2']);
        expect(await store.item('t', 'conv_a', 'msg_2')).toEqual(message('msg_2', 'again'));
      }));

    it('pages ascending and descending, after an item, with has_more', () =>
      withStore(async (store) => {
        const all = Array.from({ length: 7 }, (_, index) => message(`msg_${index}`));
        await store.create('t', conversation('conv_a'), all.slice(0, 3));
        await store.append('t', 'conv_a', all.slice(3));
        const page = async (query: Parameters<ConversationStore['page']>[2]) => {
          const result = await store.page('t', 'conv_a', query);
          if (result.kind !== 'page') throw new Error(result.kind);
          return { ids: ids(result.items), hasMore: result.hasMore };
        };
        expect(await page({ limit: 3, order: 'asc' })).toEqual({ ids: ['msg_0', 'msg_1', 'msg_2'], hasMore: true });
        expect(await page({ limit: 3, order: 'asc', after: 'msg_2' })).toEqual({ ids: ['msg_3', 'msg_4', 'msg_5'], hasMore: true });
        expect(await page({ limit: 3, order: 'asc', after: 'msg_3' })).toEqual({ ids: ['msg_4', 'msg_5', 'msg_6'], hasMore: false });
        expect(await page({ limit: 3, order: 'asc', after: 'msg_6' })).toEqual({ ids: [], hasMore: false });
        expect(await page({ limit: 7, order: 'asc' })).toEqual({ ids: all.map((item) => item.id), hasMore: false });
        expect(await page({ limit: 100, order: 'asc' })).toEqual({ ids: all.map((item) => item.id), hasMore: false });

        expect(await page({ limit: 3, order: 'desc' })).toEqual({ ids: ['msg_6', 'msg_5', 'msg_4'], hasMore: true });
        expect(await page({ limit: 3, order: 'desc', after: 'msg_4' })).toEqual({ ids: ['msg_3', 'msg_2', 'msg_1'], hasMore: true });
        expect(await page({ limit: 3, order: 'desc', after: 'msg_3' })).toEqual({ ids: ['msg_2', 'msg_1', 'msg_0'], hasMore: false });
        expect(await page({ limit: 3, order: 'desc', after: 'msg_0' })).toEqual({ ids: [], hasMore: false });
        expect(await page({ limit: 1, order: 'desc', after: 'msg_1' })).toEqual({ ids: ['msg_0'], hasMore: false });

        const full = await store.page('t', 'conv_a', { limit: 2, order: 'asc' });
        expect(full).toEqual({ kind: 'page', items: all.slice(0, 2), hasMore: true });
        expect(await store.page('t', 'conv_a', { limit: 2, order: 'asc', after: 'msg_unknown' })).toEqual({ kind: 'after_not_found' });
        expect(await store.page('t', 'conv_b', { limit: 2, order: 'asc' })).toEqual({ kind: 'conversation_not_found' });
      }));

    it('deletes one item from the order and the items', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), [message('msg_1'), message('msg_2'), message('msg_3')]);
        expect(await store.deleteItem('t', 'conv_a', 'msg_2')).toBe(true);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_1', 'msg_3']);
        expect(await store.item('t', 'conv_a', 'msg_2')).toBeNull();
        expect(await store.page('t', 'conv_a', { limit: 10, order: 'asc', after: 'msg_2' })).toEqual({ kind: 'after_not_found' });
        expect(await store.deleteItem('t', 'conv_a', 'msg_2')).toBe(false);
        expect(await store.deleteItem('t', 'conv_b', 'msg_1')).toBe(false);
        expect(await store.get('t', 'conv_a')).not.toBeNull();
      }));

    it('scopes everything to the tenant', () =>
      withStore(async (store) => {
        await store.create('t1', conversation('conv_a', { owner: 't1' }), [message('msg_1')]);
        expect(await store.get('t2', 'conv_a')).toBeNull();
        expect(await store.items('t2', 'conv_a')).toBeNull();
        expect(await store.item('t2', 'conv_a', 'msg_1')).toBeNull();
        expect(await store.page('t2', 'conv_a', { limit: 10, order: 'asc' })).toEqual({ kind: 'conversation_not_found' });
        expect(await store.update('t2', 'conv_a', { owner: 't2' })).toBeNull();
        expect(await store.append('t2', 'conv_a', [message('msg_2')])).toBe(false);
        expect(await store.deleteItem('t2', 'conv_a', 'msg_1')).toBe(false);
        expect(await store.claim('t2', 'conv_a', 'h', 10_000)).toBe('conversation_not_found');
        await store.appendAndRelease('t2', 'conv_a', 'h', [message('msg_3')]);
        expect(await store.delete('t2', 'conv_a')).toBe(false);
        // t1's conversation is untouched by all of it.
        expect(await store.get('t1', 'conv_a')).toEqual(conversation('conv_a', { owner: 't1' }));
        expect(ids(await store.items('t1', 'conv_a'))).toEqual(['msg_1']);
        // The same id in another tenant is another conversation.
        await store.create('t2', conversation('conv_a', { owner: 't2' }), []);
        expect((await store.get('t1', 'conv_a'))!.metadata).toEqual({ owner: 't1' });
        expect(await store.claim('t1', 'conv_a', 'h1', 10_000)).toBe('claimed');
        expect(await store.claim('t2', 'conv_a', 'h2', 10_000)).toBe('claimed');
      }));

    it('claims: one holder at a time, renewed by the same holder, released', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), []);
        expect(await store.claim('t', 'conv_unknown', 'h1', 10_000)).toBe('conversation_not_found');
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('claimed');
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('busy');
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('claimed');
        await store.release('t', 'conv_a', 'h2');
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('busy');
        await store.release('t', 'conv_a', 'h1');
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('claimed');
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('busy');
        // Deleting the conversation drops its claim with it.
        await store.delete('t', 'conv_a');
        await store.create('t', conversation('conv_a'), []);
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('claimed');
      }));

    it('a claim lapses after its lease unless renewed', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), []);
        expect(await store.claim('t', 'conv_a', 'h1', 1_000)).toBe('claimed');
        await sleep(600);
        // Renewed: counts again from now.
        expect(await store.claim('t', 'conv_a', 'h1', 1_000, true)).toBe('claimed');
        await sleep(600);
        expect(await store.claim('t', 'conv_a', 'h2', 1_000)).toBe('busy');
        await sleep(500);
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('claimed');
        // The lapsed holder can no longer release or write.
        await store.release('t', 'conv_a', 'h1');
        expect(await store.claim('t', 'conv_a', 'h3', 10_000)).toBe('busy');
        // It is told so: its turn is not in the conversation.
        expect(await store.appendAndRelease('t', 'conv_a', 'h1', [message('msg_late')])).toBe(false);
        expect(await store.items('t', 'conv_a')).toEqual([]);
        expect(await store.claim('t', 'conv_a', 'h3', 10_000)).toBe('busy');
        // Nor can it renew its way back in.
        expect(await store.claim('t', 'conv_a', 'h1', 10_000, true)).toBe('busy');
      }));

    it('a lapsed claim that nobody took is renewed, and its items land; once another response has taken the conversation (even if it has finished), neither', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), []);
        expect(await store.claim('t', 'conv_a', 'h1', 300)).toBe('claimed');
        await sleep(500);
        // A stalled holder comes back: nobody came meanwhile.
        expect(await store.claim('t', 'conv_a', 'h1', 300, true)).toBe('claimed');
        await sleep(500);
        expect(await store.appendAndRelease('t', 'conv_a', 'h1', [message('msg_1')])).toBe(true);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_1']);

        expect(await store.claim('t', 'conv_a', 'h2', 300)).toBe('claimed');
        await sleep(500);
        // h3 takes the lapsed conversation, goes on in it and finishes.
        expect(await store.claim('t', 'conv_a', 'h3', 10_000)).toBe('claimed');
        expect(await store.appendAndRelease('t', 'conv_a', 'h3', [message('msg_3')])).toBe(true);
        // h2 comes back to a free conversation that has moved on without it: its answer was made without h3's turn.
        expect(await store.claim('t', 'conv_a', 'h2', 10_000, true)).toBe('busy');
        expect(await store.appendAndRelease('t', 'conv_a', 'h2', [message('msg_2')])).toBe(false);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_1', 'msg_3']);
        // A new response takes it as ever.
        expect(await store.claim('t', 'conv_a', 'h4', 10_000)).toBe('claimed');
      }));

    it('appendAndRelease appends and releases for the holder, or when nobody holds it; never for someone else', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), [message('msg_0')]);
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('claimed');
        expect(await store.appendAndRelease('t', 'conv_a', 'h2', [message('msg_intruder')])).toBe(false);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_0']);
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('busy');

        expect(await store.appendAndRelease('t', 'conv_a', 'h1', [message('msg_1'), message('msg_2')])).toBe(true);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_0', 'msg_1', 'msg_2']);
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('claimed');
        await store.release('t', 'conv_a', 'h2');

        // Nobody holds it, and the last to take it was h2 (its lease lapsed, nobody took it since): its items still land.
        expect(await store.appendAndRelease('t', 'conv_a', 'h2', [message('msg_3')])).toBe(true);
        expect(ids(await store.items('t', 'conv_a'))).toEqual(['msg_0', 'msg_1', 'msg_2', 'msg_3']);
        expect(await store.claim('t', 'conv_a', 'h2', 10_000)).toBe('claimed');

        // A deleted conversation gets nothing, and the call does not fail.
        await store.delete('t', 'conv_a');
        // (Not another response's: nothing to tell the caller.)
        expect(await store.appendAndRelease('t', 'conv_a', 'h2', [message('msg_4')])).toBe(true);
        expect(await store.get('t', 'conv_a')).toBeNull();
        expect(await store.items('t', 'conv_a')).toBeNull();
      }));

    it('appendAndRelease is atomic with claims: of concurrent writers, only the holder lands, and the next claim sees all its items', () =>
      withStore(async (store) => {
        await store.create('t', conversation('conv_a'), []);
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('claimed');
        const batch = Array.from({ length: 30 }, (_, index) => message(`msg_h1_${index}`));
        const results = await Promise.all([
          store.appendAndRelease('t', 'conv_a', 'h1', batch),
          store.appendAndRelease('t', 'conv_a', 'h2', [message('msg_h2')]),
          store.claim('t', 'conv_a', 'h3', 10_000),
        ]);
        const items = ids(await store.items('t', 'conv_a'))!;
        const h1 = items.filter((id) => id.startsWith('msg_h1_'));
        expect(h1).toEqual(batch.map((item) => item.id));
        const start = items.indexOf('msg_h1_0');
        expect(items.slice(start, start + 30)).toEqual(h1);
        // h2 never held the claim: it lands after the holder's batch (once nobody holds it) or not at all.
        if (items.includes('msg_h2')) expect(items.indexOf('msg_h2')).toBeGreaterThan(start + 29);
        // Issued after h1's call, h3's claim sees it released (never a released claim with items missing).
        expect(results[2]).toBe('claimed');
        expect(await store.claim('t', 'conv_a', 'h1', 10_000)).toBe('busy');
      }));

    it('keeps many items and pages through them all', () =>
      withStore(async (store) => {
        const all = Array.from({ length: 1_234 }, (_, index) => message(`msg_${String(index).padStart(4, '0')}`));
        await store.create('t', conversation('conv_a'), all.slice(0, 20));
        await store.append('t', 'conv_a', all.slice(20));
        expect(ids(await store.items('t', 'conv_a'))).toEqual(all.map((item) => item.id));
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.page('t', 'conv_a', { limit: 100, order: 'desc', ...(after && { after }) });
          if (page.kind !== 'page') throw new Error(page.kind);
          seen.push(...ids(page.items)!);
          if (!page.hasMore) break;
          after = page.items.at(-1)!.id;
        }
        expect(seen).toEqual(all.map((item) => item.id).reverse());
      }));
  });
}
