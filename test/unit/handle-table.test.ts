import { describe, expect, it } from 'vitest';
import { HandleTable } from '../../src/store/handle-table.ts';

/** A small deterministic generator, so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

describe('HandleTable', () => {
  it('keeps (tenant, key) pairs apart: the same key in two tenants is two entries', () => {
    const table = new HandleTable();
    expect(table.set('t1', 'resp_a', 1)).toBe(-1);
    expect(table.set('t2', 'resp_a', 2)).toBe(-1);
    expect(table.get('t1', 'resp_a')).toBe(1);
    expect(table.get('t2', 'resp_a')).toBe(2);
    expect(table.get('t3', 'resp_a')).toBe(-1);
    expect(table.size).toBe(2);
  });

  it('replaces the handle of a key already there and says which it was', () => {
    const table = new HandleTable();
    table.set('t', 'msg_1', 4);
    expect(table.set('t', 'msg_1', 9)).toBe(4);
    expect(table.get('t', 'msg_1')).toBe(9);
    expect(table.size).toBe(1);
  });

  it('deletes a key only while it holds the given handle (an item taken over by a later response stays)', () => {
    const table = new HandleTable();
    table.set('t', 'msg_1', 4);
    table.set('t', 'msg_1', 9);
    expect(table.delete('t', 'msg_1', 4)).toBe(false);
    expect(table.get('t', 'msg_1')).toBe(9);
    expect(table.delete('t', 'msg_1', 9)).toBe(true);
    expect(table.get('t', 'msg_1')).toBe(-1);
    expect(table.delete('t', 'msg_1', 9)).toBe(false);
    expect(table.size).toBe(0);
  });

  it('agrees with a Map through 20,000 random sets and deletes in a table that starts small and grows', () => {
    const table = new HandleTable(16);
    const model = new Map<string, number>();
    const next = random(7);
    // Few distinct keys and two tenants: long probe runs, many collisions, deletes in the middle of runs.
    const keyOf = () => `item_${Math.floor(next() * 300)}`;
    const tenantOf = () => (next() < 0.5 ? 'a' : 'b');
    for (let step = 0; step < 20_000; step++) {
      const tenant = tenantOf();
      const key = keyOf();
      const slot = `${tenant}\0${key}`;
      if (next() < 0.55) {
        const handle = Math.floor(next() * 1_000);
        expect(table.set(tenant, key, handle)).toBe(model.get(slot) ?? -1);
        model.set(slot, handle);
      } else {
        const held = model.get(slot);
        const handle = held !== undefined && next() < 0.8 ? held : 1_000 + step;
        expect(table.delete(tenant, key, handle)).toBe(held === handle);
        if (held === handle) model.delete(slot);
      }
      if (step % 500 === 0) {
        for (const tenantName of ['a', 'b']) {
          for (let index = 0; index < 300; index++) expect(table.get(tenantName, `item_${index}`)).toBe(model.get(`${tenantName}\0item_${index}`) ?? -1);
        }
      }
    }
    expect(table.size).toBe(model.size);
  });

  it('finds every key after growing from 16 slots to hold 50,000', () => {
    const table = new HandleTable(16);
    for (let index = 0; index < 50_000; index++) table.set('t', `resp_${index}`, index);
    expect(table.size).toBe(50_000);
    for (let index = 0; index < 50_000; index += 7) expect(table.get('t', `resp_${index}`)).toBe(index);
    expect(table.get('t', 'resp_50000')).toBe(-1);
  });

  it('is empty after clear', () => {
    const table = new HandleTable();
    table.set('t', 'resp_a', 1);
    table.clear();
    expect(table.get('t', 'resp_a')).toBe(-1);
    expect(table.size).toBe(0);
    table.set('t', 'resp_a', 2);
    expect(table.get('t', 'resp_a')).toBe(2);
  });
});
