import { describe, expect, it } from 'vitest';
import { initialResponse } from '../../src/engine/initial-response.ts';
import type { ResponseStore, StoredResponse } from '../../src/store/response-store.ts';

/** A stored response as the engine writes it: one user message in, one assistant message out. */
export function record(tenant: string, id: string, previousResponseId: string | null, text = id): StoredResponse {
  const response = initialResponse({ model: 'm', input: text }, id, 'm', 1_700_000_000);
  response.status = 'completed';
  response.output = [{ type: 'message', id: `msg_out_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `answer to ${text}`, annotations: [] }] }];
  return { tenant, response, inputItems: [{ id: `msg_in_${id}`, type: 'message', role: 'user', content: text }], previousResponseId };
}

/**
 * The behaviour every ResponseStore must have, run against each
 * implementation. `create` returns a fresh, empty store.
 */
export function describeResponseStoreContract(name: string, create: () => Promise<ResponseStore>, release: (store: ResponseStore) => Promise<void>): void {
  describe(`ResponseStore contract: ${name}`, () => {
    const withStore = async (body: (store: ResponseStore) => Promise<void>) => {
      const store = await create();
      try {
        await body(store);
      } finally {
        await release(store);
      }
    };

    it('stores and reads back a response exactly', () =>
      withStore(async (store) => {
        const written = record('t1', 'resp_a', null);
        await store.put(written);
        expect(await store.get('t1', 'resp_a')).toEqual(written);
        expect(await store.get('t1', 'resp_unknown')).toBeNull();
      }));

    it('replaces a response written again under its id (a background response queued, then in progress, then done), its only one included', () =>
      withStore(async (store) => {
        const queued = record('t_only', 'resp_a', null);
        queued.response.status = 'queued';
        await store.put(queued);
        const done = record('t_only', 'resp_a', null);
        await store.put(done);
        expect(await store.get('t_only', 'resp_a')).toEqual(done);
        expect((await store.chain('t_only', 'resp_a')).turns.map((turn) => turn.status)).toEqual(['completed']);
        expect([...(await store.items('t_only', ['msg_in_resp_a', 'msg_out_resp_a'])).keys()].sort()).toEqual(['msg_in_resp_a', 'msg_out_resp_a']);
      }));

    it('scopes everything to the tenant', () =>
      withStore(async (store) => {
        await store.put(record('t1', 'resp_a', null));
        expect(await store.get('t2', 'resp_a')).toBeNull();
        expect((await store.chain('t2', 'resp_a')).missing).toBe('resp_a');
        expect((await store.items('t2', ['msg_in_resp_a'])).size).toBe(0);
        expect(await store.delete('t2', 'resp_a')).toBe(false);
        expect(await store.get('t1', 'resp_a')).not.toBeNull();
      }));

    it('returns a chain oldest first and names a missing link', () =>
      withStore(async (store) => {
        await store.put(record('t1', 'resp_1', null));
        await store.put(record('t1', 'resp_2', 'resp_1'));
        await store.put(record('t1', 'resp_3', 'resp_2'));
        const chain = await store.chain('t1', 'resp_3');
        expect(chain.missing).toBeNull();
        expect(chain.turns.map((turn) => turn.responseId)).toEqual(['resp_1', 'resp_2', 'resp_3']);
        expect(chain.turns[0]).toEqual({ responseId: 'resp_1', status: 'completed', inputItems: record('t1', 'resp_1', null).inputItems, output: record('t1', 'resp_1', null).response.output });
        await store.delete('t1', 'resp_2');
        const broken = await store.chain('t1', 'resp_3');
        expect(broken.missing).toBe('resp_2');
        expect(broken.turns.map((turn) => turn.responseId)).toEqual(['resp_3']);
        expect((await store.chain('t1', 'resp_nope')).missing).toBe('resp_nope');
      }));

    it('finds input and output items by id, and forgets them with their response', () =>
      withStore(async (store) => {
        await store.put(record('t1', 'resp_a', null, 'hello'));
        const items = await store.items('t1', ['msg_in_resp_a', 'msg_out_resp_a', 'msg_missing']);
        expect([...items.keys()].sort()).toEqual(['msg_in_resp_a', 'msg_out_resp_a']);
        expect(items.get('msg_in_resp_a')).toMatchObject({ type: 'message', role: 'user', content: 'hello' });
        expect(await store.delete('t1', 'resp_a')).toBe(true);
        expect((await store.items('t1', ['msg_in_resp_a'])).size).toBe(0);
        expect(await store.delete('t1', 'resp_a')).toBe(false);
        expect(await store.get('t1', 'resp_a')).toBeNull();
      }));

    it("deleting a response forgets only the items it holds: not another's whose id its own contains (commas, any character a client may use)", () =>
      withStore(async (store) => {
        const keep = record('t_comma', 'resp_keep', null);
        keep.inputItems[0]!.id = 'msg_keep';
        const gone = record('t_comma', 'resp_gone', null, 'deleted text');
        gone.inputItems[0]!.id = 'msg_gone,msg_keep';
        await store.put(keep);
        await store.put(gone);
        expect(await store.delete('t_comma', 'resp_gone')).toBe(true);
        expect([...(await store.items('t_comma', ['msg_keep', 'msg_gone,msg_keep', 'msg_gone'])).keys()]).toEqual(['msg_keep']);
      }));

    it('an item a later response took over (it resent the item) stays when the earlier response is deleted', () =>
      withStore(async (store) => {
        const first = record('t_owner', 'resp_first', null);
        const second = record('t_owner', 'resp_second', 'resp_first', 'again');
        second.inputItems = [{ id: 'msg_in_resp_first', type: 'message', role: 'user', content: 'resent' }];
        await store.put(first);
        await store.put(second);
        expect(await store.delete('t_owner', 'resp_first')).toBe(true);
        const found = await store.items('t_owner', ['msg_in_resp_first', 'msg_out_resp_first']);
        expect([...found.keys()]).toEqual(['msg_in_resp_first']);
        expect(found.get('msg_in_resp_first')).toMatchObject({ content: 'resent' });
      }));

    it('an item two responses hold stays findable while either is stored: deleting the later one gives it back to the earlier', () =>
      withStore(async (store) => {
        const first = record('t_heir', 'resp_first', null);
        const second = record('t_heir', 'resp_second', null, 'again');
        // The later response holds the earlier one's output (an item_reference resolved, or the item resent).
        second.inputItems = [{ ...first.response.output[0]!, id: 'msg_out_resp_first' } as never];
        const third = record('t_heir', 'resp_third', null, 'and again');
        third.inputItems = [{ ...first.response.output[0]!, id: 'msg_out_resp_first' } as never];
        await store.put(first);
        await store.put(second);
        await store.put(third);
        // Stored again (a background response: queued, then finished), it still knows whom it took the item from.
        await store.put(third);
        expect(await store.delete('t_heir', 'resp_third')).toBe(true);
        expect([...(await store.items('t_heir', ['msg_out_resp_first'])).keys()]).toEqual(['msg_out_resp_first']);
        expect(await store.delete('t_heir', 'resp_second')).toBe(true);
        const found = await store.items('t_heir', ['msg_out_resp_first']);
        expect(found.get('msg_out_resp_first')).toMatchObject({ type: 'message', role: 'assistant' });
        expect(await store.delete('t_heir', 'resp_first')).toBe(true);
        expect((await store.items('t_heir', ['msg_out_resp_first'])).size).toBe(0);
      }));

    it('returns copies: changing what was read does not change what is stored', () =>
      withStore(async (store) => {
        await store.put(record('t1', 'resp_a', null));
        const read = (await store.get('t1', 'resp_a'))!;
        read.response.status = 'failed';
        expect((await store.get('t1', 'resp_a'))!.response.status).toBe('completed');
      }));

    it('follows a deep chain', () =>
      withStore(async (store) => {
        for (let index = 0; index < 150; index++) await store.put(record('t1', `resp_${index}`, index === 0 ? null : `resp_${index - 1}`));
        const chain = await store.chain('t1', 'resp_149');
        expect(chain.turns).toHaveLength(150);
        expect(chain.turns[0]!.responseId).toBe('resp_0');
      }));
  });
}
