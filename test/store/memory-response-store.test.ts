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

  it('keeps least-recently-used order through many more reads than entries (the recency queue drops its holes)', async () => {
    const store = new MemoryResponseStore({ maxEntries: 3, ttlSeconds: 60 });
    for (const id of ['resp_1', 'resp_2', 'resp_3']) await store.put(record('t', id, null));
    // Thousands of reads append thousands of places to the queue and leave holes behind: order must survive compaction.
    for (let round = 0; round < 3_000; round++) {
      await store.get('t', 'resp_1');
      await store.get('t', 'resp_3');
    }
    await store.put(record('t', 'resp_4', null));
    expect(await store.get('t', 'resp_2')).toBeNull();
    await store.put(record('t', 'resp_5', null));
    // resp_1 was read before resp_3 in every round, so it is the older of the two.
    expect(await store.get('t', 'resp_1')).toBeNull();
    for (const id of ['resp_3', 'resp_4', 'resp_5']) expect(await store.get('t', id)).not.toBeNull();
  });

  it('evicts exactly the oldest through 25,000 puts, and reads what it keeps after its slots are reused', async () => {
    const store = new MemoryResponseStore({ maxEntries: 1_000, ttlSeconds: 60 });
    for (let index = 0; index < 25_000; index++) await store.put(record('t', `resp_${index}`, index === 0 ? null : `resp_${index - 1}`));
    expect(await store.get('t', 'resp_23999')).toBeNull();
    expect((await store.get('t', 'resp_24000'))?.response.id).toBe('resp_24000');
    expect((await store.items('t', ['msg_in_resp_24500', 'msg_out_resp_24999', 'msg_in_resp_23999'])).size).toBe(2);
    const chain = await store.chain('t', 'resp_24999');
    expect(chain.missing).toBe('resp_23999');
    expect(chain.turns).toHaveLength(1_000);
    expect(chain.turns[0]?.responseId).toBe('resp_24000');
    expect(chain.turns.at(-1)?.responseId).toBe('resp_24999');
  });

  it('keeps the same response id of two tenants as two responses, each removed on its own', async () => {
    const store = new MemoryResponseStore({ maxEntries: 10, ttlSeconds: 60 });
    await store.put(record('t1', 'resp_same', null, 'first'));
    await store.put(record('t2', 'resp_same', null, 'second'));
    expect((await store.get('t1', 'resp_same'))?.inputItems[0]).toMatchObject({ content: 'first' });
    expect((await store.get('t2', 'resp_same'))?.inputItems[0]).toMatchObject({ content: 'second' });
    expect(await store.delete('t1', 'resp_same')).toBe(true);
    expect(await store.get('t1', 'resp_same')).toBeNull();
    expect((await store.items('t2', ['msg_in_resp_same'])).size).toBe(1);
  });

  it('evicts the least recently used beyond maxBytes, counting what a replaced or deleted response held no longer', async () => {
    const big = (id: string) => record('t', id, null, 'x'.repeat(400_000));
    const store = new MemoryResponseStore({ maxEntries: 1_000, maxBytes: 2_000_000, ttlSeconds: 60 });
    // Each holds its text twice (input and answer): about 800 KB, so two fit and a third pushes out the least recently used.
    await store.put(big('resp_1'));
    await store.put(big('resp_2'));
    await store.get('t', 'resp_1');
    await store.put(big('resp_3'));
    expect(await store.get('t', 'resp_2')).toBeNull();
    expect((await store.items('t', ['msg_in_resp_2'])).size).toBe(0);
    expect(await store.get('t', 'resp_1')).not.toBeNull();
    expect(await store.get('t', 'resp_3')).not.toBeNull();
    // Putting a response again replaces its bytes, deleting one frees them: both kept entries stay with room for a third.
    await store.put(big('resp_3'));
    expect(await store.get('t', 'resp_1')).not.toBeNull();
    expect(await store.delete('t', 'resp_1')).toBe(true);
    await store.put(big('resp_4'));
    expect(await store.get('t', 'resp_3')).not.toBeNull();
    expect(await store.get('t', 'resp_4')).not.toBeNull();
    // Small responses are not pushed out by the count of bytes alone.
    for (let index = 0; index < 100; index++) await store.put(record('t', `resp_small_${index}`, null));
    expect(await store.get('t', 'resp_small_0')).not.toBeNull();
  });

  it('keeps the newest response even when it alone is larger than maxBytes', async () => {
    const store = new MemoryResponseStore({ maxEntries: 1_000, maxBytes: 100_000, ttlSeconds: 60 });
    await store.put(record('t', 'resp_small', null));
    await store.put(record('t', 'resp_huge', 'resp_small', 'y'.repeat(200_000)));
    expect((await store.get('t', 'resp_huge'))?.inputItems[0]).toMatchObject({ content: 'y'.repeat(200_000) });
    expect(await store.get('t', 'resp_small')).toBeNull();
  });

  it('tells of every response that leaves the store — pushed out, expired, deleted — and of none stored again over itself', async () => {
    let now = 1_000_000;
    const dropped: string[] = [];
    const store = new MemoryResponseStore({ maxEntries: 2, ttlSeconds: 5, now: () => now, onDropped: (tenant, id) => dropped.push(`${tenant}/${id}`) });
    await store.put(record('t', 'resp_1', null));
    // A background response is stored queued, then finished: the same response, not one that left.
    await store.put(record('t', 'resp_1', null));
    await store.put(record('t', 'resp_2', null));
    expect(dropped).toEqual([]);
    await store.put(record('t', 'resp_3', null));
    expect(dropped).toEqual(['t/resp_1']);
    await store.delete('t', 'resp_2');
    expect(dropped).toEqual(['t/resp_1', 't/resp_2']);
    now += 6_000;
    expect(await store.get('t', 'resp_3')).toBeNull();
    expect(dropped).toEqual(['t/resp_1', 't/resp_2', 't/resp_3']);
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

describe('MemoryResponseStore chains of long sessions', () => {
  it("a chain and an item are read without parsing the rest of each stored response (its tools, instructions, settings) once a chain has read it: a coding agent's 40 KB of tools a turn is not parsed again on every later turn", async () => {
    const store = new MemoryResponseStore({ maxEntries: 1_000, ttlSeconds: 60 });
    const tools = Array.from({ length: 40 }, (_, index) => ({ type: 'function' as const, name: `tool_${index}`, description: 'x'.repeat(1_000), parameters: { type: 'object', properties: {} }, strict: false }));
    let previous: string | null = null;
    for (let turn = 0; turn < 5; turn++) {
      const written = record('t', `resp_${turn}`, previous);
      written.response.tools = tools;
      written.response.instructions = 'i'.repeat(5_000);
      written.response.status = turn === 4 ? 'incomplete' : 'completed';
      await store.put(written);
      previous = written.response.id;
    }
    // The first read of each finds where its output is (the put does not spend on it: most responses are never read again).
    await store.chain('t', 'resp_4');
    const parsed: number[] = [];
    const parse = JSON.parse;
    JSON.parse = (text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
      parsed.push(text.length);
      return parse(text, reviver);
    };
    let chain: Awaited<ReturnType<MemoryResponseStore['chain']>>;
    let items: Awaited<ReturnType<MemoryResponseStore['items']>>;
    try {
      chain = await store.chain('t', 'resp_4');
      items = await store.items('t', ['msg_out_resp_2', 'msg_in_resp_3']);
    } finally {
      JSON.parse = parse;
    }
    expect(Math.max(...parsed)).toBeLessThan(1_000);
    expect(chain.missing).toBeNull();
    expect(chain.turns.map((turn) => [turn.responseId, turn.status, turn.inputItems[0]!.id, turn.output[0]!.id])).toEqual(
      [0, 1, 2, 3, 4].map((turn) => [`resp_${turn}`, turn === 4 ? 'incomplete' : 'completed', `msg_in_resp_${turn}`, `msg_out_resp_${turn}`]),
    );
    expect([...items.keys()]).toEqual(['msg_out_resp_2', 'msg_in_resp_3']);
    // The whole response reads back as it was stored, its output included, in its own key order.
    expect(Object.keys((await store.get('t', 'resp_3'))!.response)).toEqual(Object.keys(record('t', 'resp_3', null).response));
    const whole = await store.get('t', 'resp_4');
    expect(whole!.response.tools).toHaveLength(40);
    expect(whole!.response.output[0]!.id).toBe('msg_out_resp_4');
  });
});
