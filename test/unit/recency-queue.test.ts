import { describe, expect, it } from 'vitest';
import { RecencyQueue } from '../../src/store/recency-queue.ts';

const item = (name: string) => ({ name, position: -1 });

describe('RecencyQueue', () => {
  it('gives the least recently used item first, counting a touch as a use', () => {
    const queue = new RecencyQueue<ReturnType<typeof item>>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    for (const entry of [a, b, c]) queue.append(entry);
    expect(queue.oldest()).toBe(a);
    queue.touch(a);
    expect(queue.oldest()).toBe(b);
    expect(queue.remove(b)).toBe(true);
    expect(queue.remove(b)).toBe(false);
    expect(queue.oldest()).toBe(c);
    expect(queue.size).toBe(2);
  });

  it('keeps its order through compactions: 100,000 touches of 5 items, then drained oldest first', () => {
    const queue = new RecencyQueue<ReturnType<typeof item>>();
    const items = ['a', 'b', 'c', 'd', 'e'].map(item);
    for (const entry of items) queue.append(entry);
    for (let round = 0; round < 20_000; round++) for (const index of [3, 0, 4, 1, 2]) queue.touch(items[index]!);
    const drained: string[] = [];
    for (let next = queue.oldest(); next; next = queue.oldest()) {
      drained.push(next.name);
      queue.remove(next);
    }
    expect(drained).toEqual(['d', 'a', 'e', 'b', 'c']);
    expect(queue.oldest()).toBeUndefined();
  });

  it('walks past removed items at the front as it evicts (a full store at steady state)', () => {
    const queue = new RecencyQueue<ReturnType<typeof item>>();
    const names: string[] = [];
    for (let index = 0; index < 50_000; index++) {
      queue.append(item(String(index)));
      if (queue.size > 1_000) {
        const oldest = queue.oldest()!;
        names.push(oldest.name);
        queue.remove(oldest);
      }
    }
    expect(names).toHaveLength(49_000);
    expect(names.at(-1)).toBe('48999');
    expect(queue.oldest()?.name).toBe('49000');
  });
});
