import { describe, expect, it } from 'vitest';
import { ByteArena } from '../../src/store/byte-arena.ts';

describe('ByteArena', () => {
  it('gives back both texts as written, any characters included', () => {
    const arena = new ByteArena();
    const first = JSON.stringify({ text: 'héllo — 你好 🎉', nested: { n: 1 } });
    const span = arena.write(first, '[{"id":"msg_1"}]');
    expect(arena.first(span)).toBe(first);
    expect(arena.second(span)).toBe('[{"id":"msg_1"}]');
  });

  it('keeps every span readable across many chunks, and a moved span reads the same', () => {
    const arena = new ByteArena();
    const texts = Array.from({ length: 5_000 }, (_, index) => `{"index":${index},"pad":"${'x'.repeat(index % 900)}"}`);
    const spans = texts.map((text) => arena.write(text, String(texts.length)));
    const moved = arena.move(spans[10]!);
    expect(arena.first(moved)).toBe(texts[10]);
    for (let index = 0; index < texts.length; index += 97) expect(arena.first(spans[index]!)).toBe(texts[index]);
  });

  it('reuses an emptied chunk without disturbing the spans still held', () => {
    const arena = new ByteArena();
    const big = 'y'.repeat(300_000);
    const early = [arena.write(big, 'a'), arena.write(big, 'b'), arena.write(big, 'c')];
    const kept = arena.write(big, 'kept');
    for (const span of early) arena.release(span);
    // The first chunk is empty now: what is written next may land in it, and `kept` must not change.
    const later = Array.from({ length: 8 }, (_, index) => arena.write(big, `later ${index}`));
    expect(arena.second(kept)).toBe('kept');
    expect(later.map((span) => arena.second(span))).toEqual(Array.from({ length: 8 }, (_, index) => `later ${index}`));
  });

  it('holds a text larger than a chunk on its own', () => {
    const arena = new ByteArena();
    const huge = 'z'.repeat(3 * 1024 * 1024);
    const span = arena.write(huge, 'tail');
    const after = arena.write('small', 'one');
    expect(arena.first(span)).toBe(huge);
    expect(arena.second(span)).toBe('tail');
    expect(arena.first(after)).toBe('small');
  });
});
