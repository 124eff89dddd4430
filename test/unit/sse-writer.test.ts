import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseWriter } from '../../src/http/sse-writer.ts';

/** Bytes the response's socket has handed to the kernel, and what it still holds (buffered or corked). */
function standing(raw: ServerResponse): { sent: number; unsent: number } {
  const socket = raw.socket!;
  return { sent: socket.bytesWritten - socket.writableLength, unsent: socket.writableLength + socket.writableCorked };
}

describe('SseWriter on a real socket', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  /** Runs `write` as a server's handler, all in one go (as a burst of upstream events is processed), and returns what it saw plus the body the client got. */
  async function serve(write: (writer: SseWriter, raw: ServerResponse) => unknown[]): Promise<{ seen: unknown[]; body: string }> {
    let seen: unknown[] = [];
    const server = createServer((_req, raw) => {
      const writer = new SseWriter(raw, {}, { keepAliveMs: 60_000, stallMs: 60_000 });
      seen = write(writer, raw);
      // Later events come on a later tick, as the rest of a stream does.
      setImmediate(() => writer.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const body = await new Promise<string>((resolve, reject) => {
      const outgoing = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST' }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (piece: string) => (text += piece));
        response.on('end', () => resolve(text));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    return { seen, body };
  }

  it('sends the first frame with output at once, with the headers and the frames before it, past the tick', async () => {
    const { seen, body } = await serve((writer, raw) => {
      const steps: unknown[] = [];
      writer.event('response.created', '{"n":0}');
      writer.event('response.in_progress', '{"n":1}');
      writer.event('response.output_item.added', '{"n":2}');
      writer.event('response.content_part.added', '{"n":3}');
      steps.push(standing(raw));
      writer.event('response.output_text.delta', '{"n":4}');
      // Still inside the same tick: the socket has handed all of it, headers first, to the kernel already.
      const first = standing(raw);
      steps.push(first);
      writer.event('response.output_text.delta', '{"n":5}');
      writer.event('response.output_text.delta', '{"n":6}');
      // What follows the first output waits for the tick's end again, to go out as one chunk.
      steps.push(standing(raw).sent === first.sent ? 'held' : 'sent');
      return steps;
    });
    const [before, atOutput, after] = seen as [{ sent: number; unsent: number }, { sent: number; unsent: number }, string];
    expect(before).toEqual({ sent: 0, unsent: 0 });
    expect(atOutput.unsent).toBe(0);
    expect(atOutput.sent).toBeGreaterThan(0);
    expect(after).toBe('held');
    expect(body.match(/"n":\d/g)).toEqual(['"n":0', '"n":1', '"n":2', '"n":3', '"n":4', '"n":5', '"n":6']);
  });

  it('a failure before any output is output too: it leaves at once', async () => {
    const { seen } = await serve((writer, raw) => {
      writer.event('response.created', '{}');
      writer.event('response.failed', '{}');
      return [standing(raw)];
    });
    expect(seen).toEqual([{ sent: expect.any(Number), unsent: 0 }]);
    expect((seen[0] as { sent: number }).sent).toBeGreaterThan(0);
  });
});
