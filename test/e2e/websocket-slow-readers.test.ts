import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk } from '../support/scripted-chat-upstream.ts';

/** An answer larger than loopback's socket buffers hold (a few MiB each way), so that frames wait in the gateway while the client does not read. */
const PIECE = 'x'.repeat(1024 * 1024);
const PIECES = 12;

/**
 * A WebSocket client that reads slowly (a large answer on a slow link, a busy
 * page) gets its pong back to the gateway late, behind the frames it is still
 * taking. It is cut only when it takes nothing for server.clientStallTimeoutMs,
 * as an SSE client is, not when a ping goes unanswered for an interval.
 */
describe('WebSocket transport: slow readers', () => {
  const upstream = new ScriptedChatUpstream(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: PIECES }, () => chunk({ content: PIECE })), chunk({}, 'stop'), usageChunk(1, PIECES)]) }));
  const gateways: RunningGateway[] = [];
  let upstreamUrl: string;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await upstream.close();
  });

  /**
   * One response on a fresh socket whose reading pauses for `pauseMs` once two
   * megabyte deltas arrived (the gateway is then sending the rest, which fills
   * the socket's buffers and waits in the gateway); how it ended. Pings every
   * 400 ms: at 100 ms, on a loaded machine, the first tick of the pause could
   * come before the gateway had anything waiting, and a peer that answers no
   * ping with nothing waiting for it is gone, by design.
   */
  async function pausingReader(stallMs: number, pauseMs: number): Promise<{ completed: boolean; closeCode: number | null }> {
    const gateway = await startGateway(upstreamUrl, { server: { keepAliveIntervalMs: 400, clientStallTimeoutMs: stallMs } });
    gateways.push(gateway);
    const socket = new WebSocket(`${gateway.origin.replace('http:', 'ws:')}/v1/responses`, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise((resolve) => socket.once('open', resolve));
    let paused = false;
    let completed = false;
    let deltas = 0;
    return new Promise((resolve) => {
      socket.on('message', (data) => {
        const type = JSON.parse(String(data)).type as string;
        if (type === 'response.completed') {
          completed = true;
          socket.close();
        }
        if (type === 'response.output_text.delta') deltas++;
        if (paused || deltas < 2) return;
        paused = true;
        const raw = (socket as unknown as { _socket: import('node:net').Socket })._socket;
        raw.pause();
        setTimeout(() => raw.resume(), pauseMs);
      });
      socket.on('close', (code) => resolve({ completed, closeCode: code }));
      socket.send(JSON.stringify({ type: 'response.create', model: 'm', input: 'Write a lot.', store: false }));
    });
  }

  it('a client that pauses reading for many ping intervals, within the stall bound, gets the whole response', async () => {
    expect(await pausingReader(60_000, 3_000)).toEqual({ completed: true, closeCode: 1005 });
  });

  it('a client that takes nothing past the stall bound is cut', async () => {
    expect((await pausingReader(500, 4_000)).completed).toBe(false);
  });
});
