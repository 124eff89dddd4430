import { describe, expect, it } from 'vitest';
import { boundedCount } from '../../src/engine/token-estimate.ts';

/** A counter that records what it was given: a token per four characters. */
function recording() {
  const given: number[] = [];
  return { given, count: (text: string) => (given.push(text.length), Math.ceil(text.length / 4)) };
}

describe('the tokenizer within bounds of work', () => {
  it('is given no run without whitespace longer than 1,024 characters, and whitespace-separated text whole', () => {
    const { given, count } = recording();
    boundedCount(count)(`start ${'x'.repeat(5_000)} end`);
    expect(Math.max(...given)).toBeLessThanOrEqual(1_024);
    expect(given.reduce((sum, length) => sum + length, 0)).toBe(5_000 + 'start  end'.length);
    given.length = 0;
    const prose = 'a few words '.repeat(1_000);
    boundedCount(count)(prose);
    expect(given).toEqual([prose.length]);
  });

  it("is given at most 256 KiB of a turn's texts; the rest are counted at the rate it found", () => {
    const { given, count } = recording();
    const measure = boundedCount(count);
    const texts = Array.from({ length: 10 }, () => 'word '.repeat(20_000));
    const tokens = texts.map((text) => measure(text));
    expect(given.reduce((sum, length) => sum + length, 0)).toBe(262_144);
    // 100,000 characters a text at a token per four: 25,000 each, counted or not.
    for (const counted of tokens) expect(counted).toBe(25_000);
  });
});
