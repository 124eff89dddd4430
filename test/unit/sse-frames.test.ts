import { describe, expect, it } from 'vitest';
import { readSseFrameBatches, readSseFrames } from '../../src/providers/sse-frames.ts';
import { UpstreamAnswerTooLarge } from '../../src/providers/upstream-answer-limits.ts';
import { bytesInPieces } from '../support/turn-helpers.ts';

async function framesOf(text: string, size: number) {
  const frames = [];
  for await (const frame of readSseFrames(bytesInPieces(text, size))) frames.push(frame);
  return frames;
}

describe('readSseFrames', () => {
  const text = 'event: a\ndata: {"x":"é😀"}\n\n: comment\n\ndata: line1\ndata: line2\n\ndata:nospace\n\n';
  const expected = [
    { event: 'a', data: '{"x":"é😀"}' },
    { event: null, data: 'line1\nline2' },
    { event: null, data: 'nospace' },
  ];

  it('yields the same frames whatever the read boundaries, multi-byte characters included', async () => {
    for (const size of [1, 2, 3, 5, 8, 13, 1000]) expect(await framesOf(text, size)).toEqual(expected);
  });

  it('accepts CRLF and CR line ends, even with CRLF split across reads', async () => {
    for (const size of [1, 2, 7]) {
      expect(await framesOf(text.replaceAll('\n', '\r\n'), size)).toEqual(expected);
      expect(await framesOf(text.replaceAll('\n', '\r'), size)).toEqual(expected);
    }
  });

  it('dispatches a last frame that lacks its blank line', async () => {
    expect(await framesOf('data: one\n\ndata: two', 4)).toEqual([
      { event: null, data: 'one' },
      { event: null, data: 'two' },
    ]);
  });

  it('an event longer than its bound, as a line that never ends or as data lines together, throws; events within it pass, whatever the reads', async () => {
    const endless = async function* (piece: string) {
      yield 'data: {"ok":1}\n\n';
      for (;;) yield piece;
    };
    const read = async (body: AsyncIterable<string>) => {
      const frames = [];
      for await (const batch of readSseFrameBatches(body, 1_000)) frames.push(...batch);
      return frames;
    };
    await expect(read(endless('x'.repeat(100)))).rejects.toBeInstanceOf(UpstreamAnswerTooLarge);
    await expect(read(endless('data: ' + 'y'.repeat(50) + '\n'))).rejects.toThrow(/an event larger than/);
    const within = 'data: ' + 'z'.repeat(900) + '\n\n';
    for (const size of [1, 7, 1000]) expect(await (async () => {
      const frames = [];
      for await (const batch of readSseFrameBatches(bytesInPieces(within.repeat(3), size), 1_000)) frames.push(...batch);
      return frames;
    })()).toEqual(Array.from({ length: 3 }, () => ({ event: null, data: 'z'.repeat(900) })));
  });
});
