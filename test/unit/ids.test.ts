import { describe, expect, it } from 'vitest';
import { newId } from '../../src/util/ids.ts';

describe('newId', () => {
  it('is the prefix, an underscore and 32 lowercase hex digits, different every time (across pool refills)', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 2_000; index++) {
      const id = newId(index % 2 === 0 ? 'resp' : 'mcpl');
      expect(id).toMatch(index % 2 === 0 ? /^resp_[0-9a-f]{32}$/ : /^mcpl_[0-9a-f]{32}$/);
      seen.add(id.slice(5));
    }
    expect(seen.size).toBe(2_000);
  });

  it('spreads over every hex digit in every position', () => {
    const digits = Array.from({ length: 32 }, () => new Set<string>());
    for (let index = 0; index < 2_000; index++) [...newId('msg').slice(4)].forEach((digit, position) => digits[position]!.add(digit));
    for (const seen of digits) expect(seen.size).toBe(16);
  });
});
