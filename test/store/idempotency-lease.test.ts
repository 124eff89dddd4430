import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../src/store/idempotency-store.ts';
import { MemoryIdempotencyStore } from '../../src/store/memory-idempotency-store.ts';
import { RedisIdempotencyStore } from '../../src/store/redis-idempotency-store.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { sleep } from '../support/wait-for.ts';

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await acquireRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client.disconnect();
  await redis.cleanup();
  await redis.stop();
});

const stores: [string, () => IdempotencyStore][] = [
  ['memory', () => new MemoryIdempotencyStore({ maxEntries: 100 })],
  ['redis', () => new RedisIdempotencyStore({ client, keys: new RedisKeys(redis.prefix()), readyWaitMs: 1_000 })],
];

/** A running request holds its key on a lease it renews: a holder that dies lets the key go; a finished key keeps its window. */
describe.each(stores)('idempotency holds on the %s store', (_name, open) => {
  it('a hold nobody renews lapses after its lease; one renewed stays; renewing a finished key leaves its window', async () => {
    const store = open();
    expect(await store.begin('t', 'lapses', 'f', 1)).toEqual({ kind: 'new' });
    expect(await store.begin('t', 'lapses', 'f', 1)).toEqual({ kind: 'pending', fingerprint: 'f' });
    expect(await store.begin('t', 'renewed', 'f', 1)).toEqual({ kind: 'new' });
    await sleep(600);
    await store.renew('t', 'renewed', 2);
    expect(await store.begin('t', 'done', 'f', 1)).toEqual({ kind: 'new' });
    await store.complete('t', 'done', 'f', 'resp_1', 60);
    await store.renew('t', 'done', 1);
    await sleep(1_300);
    // The dead holder's key is free again; the renewed one still held; the finished one still answers.
    expect(await store.begin('t', 'lapses', 'f', 1)).toEqual({ kind: 'new' });
    expect(await store.begin('t', 'renewed', 'f', 1)).toEqual({ kind: 'pending', fingerprint: 'f' });
    expect(await store.begin('t', 'done', 'f', 1)).toEqual({ kind: 'done', fingerprint: 'f', responseId: 'resp_1' });
  });
});

describe('the memory store\'s bound on keys', () => {
  it('never pushes out a key whose request still runs (a retry would run it again): finished keys go first, the longest finished first', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 2 });
    expect(await store.begin('t', 'long-run', 'f', 60)).toEqual({ kind: 'new' });
    for (const other of ['a', 'b', 'c']) {
      expect(await store.begin('t', other, 'f', 60)).toEqual({ kind: 'new' });
      await store.complete('t', other, 'f', `resp_${other}`, 60);
    }
    expect(await store.begin('t', 'long-run', 'f', 60)).toEqual({ kind: 'pending', fingerprint: 'f' });
    // Finished, it counts from now: keys finished before it go first.
    await store.complete('t', 'long-run', 'f', 'resp_long', 60);
    expect(await store.begin('t', 'd', 'f', 60)).toEqual({ kind: 'new' });
    expect(await store.begin('t', 'long-run', 'f', 60)).toEqual({ kind: 'done', fingerprint: 'f', responseId: 'resp_long' });
  });
});

describe('a request\'s hold on its key', () => {
  it('once it names its response, a later failure (sending that response) does not let the key go: a retry gets the response, never a second run', async () => {
    const { takeIdempotencyKey } = await import('../../src/http/idempotency.ts');
    const keys = new MemoryIdempotencyStore({ maxEntries: 10 });
    const request = { headers: { 'idempotency-key': 'named-then-failed' }, body: { model: 'm', input: 'hi', background: true }, tenant: 't' };
    const hold = await takeIdempotencyKey(request as never, {} as never, true, { keys, responses: {} as never, ttlSeconds: 60 }, {} as never);
    if (hold === null || hold === 'none') throw new Error('expected a hold');
    await hold.complete({ id: 'resp_queued', store: true, status: 'queued' } as never);
    // The background stream could not be read (the event log failed): the route's failure path lets go of what it holds.
    await hold.release();
    expect(await keys.begin('t', 'named-then-failed', 'any', 30)).toMatchObject({ kind: 'done', responseId: 'resp_queued' });
  });
});
