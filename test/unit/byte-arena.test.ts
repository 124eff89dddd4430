import { describe, expect, it } from 'vitest';
import { ByteArena, UNWRITTEN } from '../../src/store/byte-arena.ts';

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
    const moved = spans[10]!;
    const before = { chunk: moved.chunk, offset: moved.offset };
    arena.move(moved);
    expect({ chunk: moved.chunk, offset: moved.offset }).not.toEqual(before);
    expect(arena.first(moved)).toBe(texts[10]);
    expect(arena.second(moved)).toBe(String(texts.length));
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

  it('writes into the span it is given, and moves a span larger than a chunk as well', () => {
    const arena = new ByteArena();
    const entry = { chunk: UNWRITTEN, offset: 0, firstLength: 0, secondLength: 0, id: 'resp_1' };
    expect(arena.write('{"a":1}', '[]', entry)).toBe(entry);
    expect([arena.first(entry), arena.second(entry), entry.id]).toEqual(['{"a":1}', '[]', 'resp_1']);
    const huge = 'h'.repeat(1_500_000);
    const span = arena.write(huge, 'end');
    arena.move(span);
    expect([arena.first(span).length, arena.second(span)]).toEqual([1_500_000, 'end']);
  });

  it('counts a moved span out of its old chunk and into its new one: chunks are reused only once empty', () => {
    const arena = new ByteArena();
    // More than half a chunk each: every write and every move takes a chunk of its own.
    const text = (name: string) => name.repeat(600_000);
    const held = ['a', 'b', 'c'].map((name) => ({ name, span: arena.write(text(name), name) }));
    for (let round = 0; round < 30; round++) {
      arena.move(held[round % 3]!.span);
      arena.release(arena.write(text('t'), 'temporary'));
    }
    for (const { name, span } of held) expect([arena.first(span) === text(name), arena.second(span)]).toEqual([true, name]);
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
