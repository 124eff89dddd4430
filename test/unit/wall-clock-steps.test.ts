import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SseWriter } from '../../src/http/sse-writer.ts';
import type { ResponseResource } from '../../src/protocol/response-resource.ts';
import { MemoryConversationStore } from '../../src/store/memory-conversation-store.ts';
import { MemoryEventLog } from '../../src/store/memory-event-log.ts';
import { MemoryIdempotencyStore } from '../../src/store/memory-idempotency-store.ts';
import { MemoryRateLimiter } from '../../src/store/memory-rate-limiter.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { sleep } from '../support/wait-for.ts';

const HOUR_MS = 3_600_000;

/** The wall clock, before anything under test reads (or keeps a reference to) `Date.now`: `step(ms)` is NTP stepping it (timers and the monotonic clock go on as they were). */
function wallClock(): { step(ms: number): void } {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  return { step: (ms) => (offset += ms) };
}

/**
 * What measures time passing in one process does so on a clock that never
 * steps: a wall clock stepped back an hour (NTP) or forward a day (a VM
 * resumed) neither locks limits nor expires what was just written.
 */
describe('in-process leases, TTLs and limits when the wall clock steps', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a rate limit refills as before after the clock steps back an hour (it drained for the hour, answering 429 to every key)', async () => {
    const clock = wallClock();
    const limiter = new MemoryRateLimiter();
    const limits = { requestsPerMinute: 600, tokensPerMinute: null, tokensPerDay: 100_000, concurrentResponses: null };
    const take = () => limiter.take('key', limits, { requests: 1, tokens: 10, slot: null, slotLeaseMs: 0 });
    for (let index = 0; index < 600; index++) expect((await take()).allowed).toBe(true);
    const refused = await take();
    expect(refused.allowed).toBe(false);
    clock.step(-HOUR_MS);
    // 600 a minute: one more every 100 ms.
    await sleep(250);
    const after = await take();
    expect(after.allowed).toBe(true);
    // And the day's token bucket was not drained by the step either.
    expect(after.state.tokensDay!.remaining).toBeGreaterThan(90_000);
  });

  it("an idempotency key's running request keeps its key after the clock steps forward a minute (its retry ran it a second time)", async () => {
    const clock = wallClock();
    const store = new MemoryIdempotencyStore({ maxEntries: 10 });
    expect(await store.begin('t', 'key', 'fp', 30)).toEqual({ kind: 'new' });
    clock.step(60_000);
    expect(await store.begin('t', 'key', 'fp', 30)).toEqual({ kind: 'pending', fingerprint: 'fp' });
  });

  it('stored responses, event streams and conversation claims outlive a forward step past their TTL and lease', async () => {
    const clock = wallClock();
    const responses = new MemoryResponseStore({ maxEntries: 10, ttlSeconds: 3_600 });
    const response = { id: 'resp_1', object: 'response', status: 'completed', output: [] } as unknown as ResponseResource;
    await responses.put({ tenant: 't', response, inputItems: [], previousResponseId: null });
    const events = new MemoryEventLog({ maxEvents: 10, maxBytes: 10_000, ttlSeconds: 3_600 });
    await events.append('t', 'resp_1', [{ sequence: 0, type: 'response.created', json: '{}' }]);
    const conversations = new MemoryConversationStore({ maxEntries: 10, ttlSeconds: 3_600 });
    await conversations.create('t', { id: 'conv_1', created_at: 0, metadata: {} }, []);
    expect(await conversations.claim('t', 'conv_1', 'resp_a', 15_000)).toBe('claimed');
    clock.step(2 * HOUR_MS);
    try {
      expect((await responses.get('t', 'resp_1'))?.response.id).toBe('resp_1');
      expect(await events.lastSequence('t', 'resp_1')).toBe(0);
      expect(await conversations.claim('t', 'conv_1', 'resp_b', 15_000)).toBe('busy');
    } finally {
      await events.close();
      await conversations.close();
    }
  });

  it('an SSE stream keeps sending keep-alives after the clock steps back an hour (none came until the next event)', async () => {
    const clock = wallClock();
    let writer: SseWriter | null = null;
    const server = createServer((_req, raw) => {
      writer = new SseWriter(raw, {}, { keepAliveMs: 100, stallMs: 60_000 });
      writer.event('response.created', '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      let body = '';
      await new Promise<void>((resolve, reject) => {
        const outgoing = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST' }, (response) => {
          response.setEncoding('utf8');
          response.on('data', (piece: string) => (body += piece));
          resolve();
        });
        outgoing.on('error', reject);
        outgoing.end();
      });
      await sleep(150);
      clock.step(-HOUR_MS);
      const before = body.split(': keep-alive').length;
      await sleep(600);
      expect(body.split(': keep-alive').length - before).toBeGreaterThanOrEqual(2);
    } finally {
      (writer as SseWriter | null)?.end();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
