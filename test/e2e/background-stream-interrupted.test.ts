import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { chunk, ScriptedChatUpstream, sse } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const WORDS = Array.from({ length: 6 }, (_, index) => `w${index} `);

/**
 * A reader following a background response on Redis whose blocked read is
 * interrupted, as a failover interrupts it (Redis answers the blocked
 * `XREAD` with `UNBLOCKED … master -> replica`): it reads again from where it
 * stood and follows the response to its terminal event. It had ended the
 * stream there, without a terminal event or an error, the client unable to
 * tell it was cut off.
 */
describe('a resumed background stream whose blocked read Redis interrupts', () => {
  const upstream = new ScriptedChatUpstream(() => ({ kind: 'sse', pauseMs: 700, pieces: sse([chunk({ role: 'assistant', content: '' }), ...WORDS.map((word) => chunk({ content: word })), chunk({}, 'stop')]) }));
  let redis: TestRedis;
  let admin: Redis;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await acquireRedis();
    admin = new Redis(redis.url);
    gateway = await startGateway(await upstream.start(), { store: { redisUrl: redis.url, keyPrefix: redis.prefix() } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    admin.disconnect();
    await redis.cleanup();
    await redis.stop();
  });

  it('reads again where it stood and follows the response to its end: every delta, the terminal event, [DONE]', async () => {
    const created = (await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'go', background: true }) })).json()) as { id: string };
    const reading = fetch(`${gateway.baseURL}/responses/${created.id}?stream=true`).then((response) => response.text());
    // Interrupt the follower's blocked reads while the response runs, twice.
    let interrupted = 0;
    await waitFor(async () => {
      const blocked = ((await admin.call('CLIENT', 'LIST')) as string).split('\n').filter((line) => / cmd=xread\b/.test(line));
      for (const line of blocked) {
        const id = /\bid=(\d+)/.exec(line)![1]!;
        interrupted += Number(await admin.call('CLIENT', 'UNBLOCK', id, 'ERROR'));
      }
      return interrupted >= 2;
    }, 10_000, 100);
    const text = await reading;
    const { events, done } = parseSseText(text);
    expect(events.at(-1)!.type).toBe('response.completed');
    expect(done).toBe(true);
    expect(events.filter((event: any) => event.type === 'error')).toEqual([]);
    expect(events.filter((event: any) => event.type === 'response.output_text.delta').map((event: any) => event.delta).join('')).toBe(WORDS.join(''));
    assertValidResponse(events.at(-1)!.response);
    // No event twice, none missing.
    expect(events.map((event: any) => event.sequence_number)).toEqual(events.map((_: unknown, index: number) => index));
  });
});
