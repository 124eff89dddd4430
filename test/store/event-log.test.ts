import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { createBackgroundStores } from '../../src/store/create-background-stores.ts';
import { createStore } from '../../src/store/create-store.ts';
import { MemoryEventLog } from '../../src/store/memory-event-log.ts';
import { record } from './response-store-contract.ts';
import { connectRedis, type RedisClient } from '../../src/store/redis-client.ts';
import { RedisEventLog } from '../../src/store/redis-event-log.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import type { EventLogLimits, LoggedEvent, ResponseEventLog } from '../../src/store/response-event-log.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';

const event = (sequence: number, type = 'response.output_text.delta', size = 10): LoggedEvent => ({ sequence, type, json: JSON.stringify({ type, sequence_number: sequence, delta: 'x'.repeat(size) }) });
const never = () => new AbortController().signal;

async function collect(log: ResponseEventLog, id: string, after: number, signal = never()): Promise<number[]> {
  const sequences: number[] = [];
  for await (const batch of log.follow('t', id, { after, signal, stillRunning: async () => false })) sequences.push(...batch.map((entry) => entry.sequence));
  return sequences;
}

type Make = (limits: EventLogLimits) => ResponseEventLog;

/** The event log's contract, on the memory log, Redis Streams and Redis Streams on a cluster. */
function contract(name: string, setUp: () => Promise<{ make: Make; tearDown(): Promise<void> }>) {
  describe(`event log on ${name}`, () => {
    let make: Make;
    let tearDown: () => Promise<void>;
    let counter = 0;
    const nextId = () => `resp_${name}_${Date.now()}_${counter++}`;
    beforeAll(async () => ({ make, tearDown } = await setUp()));
    afterAll(async () => tearDown());

    it('replays after a sequence number, then follows live events to the terminal one', async () => {
      const log = make({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60 });
      const id = nextId();
      await log.append('t', id, [event(0, 'response.created'), event(1), event(2)]);
      const following = collect(log, id, 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await log.append('t', id, [event(3)]);
      await log.append('t', id, [event(4, 'response.completed')]);
      expect(await following).toEqual([1, 2, 3, 4]);
      expect(await collect(log, id, -1)).toEqual([0, 1, 2, 3, 4]);
      expect(await log.lastSequence('t', id)).toBe(4);
      expect(await log.lastSequence('other-tenant', id)).toBe(-1);
    });

    it('forgets a deleted response\'s events, every key of them', async () => {
      const log = make({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60 });
      const id = nextId();
      await log.append('t', id, [event(0, 'response.created'), event(1), event(2, 'response.completed')]);
      await log.append('t', `${id}_kept`, [event(0, 'response.created')]);
      await log.delete('t', id);
      expect(await log.lastEvent('t', id)).toBeNull();
      expect(await collect(log, id, -1)).toEqual([]);
      expect(await log.lastSequence('t', `${id}_kept`)).toBe(0);
      await log.delete('t', 'resp_never_logged');
    });

    it('keeps at most maxEvents: the oldest go, the terminal event stays, and a replay from before them is refused', async () => {
      const log = make({ maxEvents: 5, maxBytes: 1_000_000, ttlSeconds: 60 });
      const id = nextId();
      await log.append('t', id, Array.from({ length: 9 }, (_, index) => event(index)));
      await log.append('t', id, [event(9, 'response.completed')]);
      expect(await collect(log, id, 4)).toEqual([5, 6, 7, 8, 9]);
      await log.checkReplayable('t', id, 4);
      await expect(log.checkReplayable('t', id, 3)).rejects.toMatchObject({ status: 400, code: 'stream_events_expired', param: 'starting_after' });
      await expect(log.checkReplayable('t', id, -1)).rejects.toMatchObject({ code: 'stream_events_expired' });
    });

    it('takes nothing after a terminal event: a replica that stalled past its lease appends nothing after the end a reaper gave its response', async () => {
      const log = make({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60 });
      const id = nextId();
      await log.append('t', id, [event(0, 'response.created'), event(1)]);
      // The reaper's end, at the next sequence number.
      await log.append('t', id, [event(2, 'response.failed')]);
      // The stalled owner wakes and sends what it had, its own end included.
      await log.append('t', id, [event(2), event(3), event(4, 'response.failed')]);
      expect(await collect(log, id, -1)).toEqual([0, 1, 2]);
      expect(await log.lastSequence('t', id)).toBe(2);
      // Within one batch too: the terminal event is the last taken.
      const other = nextId();
      await log.append('t', other, [event(0, 'response.created'), event(1, 'response.completed'), event(2)]);
      expect(await collect(log, other, -1)).toEqual([0, 1]);
    });

    it('keeps at most maxBytes of event JSON', async () => {
      const log = make({ maxEvents: 1_000, maxBytes: 2_000, ttlSeconds: 60 });
      const id = nextId();
      const big = Array.from({ length: 20 }, (_, index) => event(index, 'response.output_text.delta', 300));
      // A batch a tick, as a stream writes them.
      for (const each of big) await log.append('t', id, [each]);
      const kept = await collect(log, id, -1, AbortSignal.timeout(300));
      const bytes = kept.reduce((sum, sequence) => sum + big[sequence]!.json.length, 0);
      expect(bytes).toBeLessThanOrEqual(2_000);
      expect(kept.at(-1)).toBe(19);
      expect(kept.length).toBeGreaterThan(1);
    });

    it('never drops a batch it was just given, however large: a follower that had read everything before it gets all of it (a large answer\'s last batch holds its text four times over)', async () => {
      const log = make({ maxEvents: 1_000, maxBytes: 2_000, ttlSeconds: 60 });
      const id = nextId();
      for (let sequence = 0; sequence < 5; sequence++) await log.append('t', id, [event(sequence, 'response.output_text.delta', 300)]);
      // Caught up, and waiting for more while the response runs.
      const following = (async () => {
        const seen: number[] = [];
        for await (const batch of log.follow('t', id, { after: 4, signal: AbortSignal.timeout(5_000), stillRunning: async () => true })) seen.push(...batch.map((entry) => entry.sequence));
        return seen;
      })();
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The last batch alone is over the bound.
      await log.append('t', id, [event(5, 'response.output_text.done', 1_000), event(6, 'response.output_item.done', 1_000), event(7, 'response.completed', 1_000)]);
      expect(await following).toEqual([5, 6, 7]);
      expect(await collect(log, id, 4)).toEqual([5, 6, 7]);
      // What came before it went.
      await expect(log.checkReplayable('t', id, 3)).rejects.toMatchObject({ code: 'stream_events_expired' });
      // Sent again (its first sending timed out, but it was taken), the batch keeps its own first events.
      await log.append('t', id, [event(5, 'response.output_text.done', 1_000), event(6, 'response.output_item.done', 1_000), event(7, 'response.completed', 1_000)]);
      expect(await collect(log, id, 4)).toEqual([5, 6, 7]);
    });

    it('a reader that goes away stops following at once', async () => {
      const log = make({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60 });
      const id = nextId();
      await log.append('t', id, [event(0, 'response.created')]);
      const controller = new AbortController();
      const started = Date.now();
      const following = collect(log, id, -1, controller.signal);
      setTimeout(() => controller.abort(), 100);
      expect(await following).toEqual([0]);
      expect(Date.now() - started).toBeLessThan(2_000);
    });
  });
}

contract('memory', async () => {
  const logs: MemoryEventLog[] = [];
  return {
    make: (limits) => {
      const log = new MemoryEventLog(limits);
      logs.push(log);
      return log;
    },
    tearDown: async () => void (await Promise.all(logs.map((log) => log.close()))),
  };
});

describe('event log in memory, bounded in all', () => {
  it('keeps at most maxTotalBytes over every response: finished logs nobody reads go first, least recently written first, then running ones are cut to their last event', async () => {
    // Each event is about 70 bytes of JSON; the whole log holds about four responses' worth.
    const log = new MemoryEventLog({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60, maxTotalBytes: 600 });
    try {
      const size = (id: string) => log.lastSequence('t', id);
      await log.append('t', 'finished_old', [event(0, 'response.created'), event(1, 'response.completed')]);
      await log.append('t', 'running_old', [event(0, 'response.created'), event(1)]);
      await log.append('t', 'finished_new', [event(0, 'response.created'), event(1, 'response.completed')]);
      await log.append('t', 'running_new', [event(0, 'response.created'), event(1)]);
      expect(await size('finished_old')).toBe(1);
      // Over the bound: the oldest finished log goes, not the older running one.
      await log.append('t', 'running_new', [event(2), event(3)]);
      expect(await size('finished_old')).toBe(-1);
      expect(await size('running_old')).toBe(1);
      // Written to again, a log is the most recent: the other finished one goes next, then the oldest running one is cut.
      await log.append('t', 'running_old', [event(2), event(3)]);
      await log.append('t', 'another', [event(0, 'response.created'), event(1), event(2), event(3), event(4)]);
      expect(await size('finished_new')).toBe(-1);
      expect(await size('another')).toBe(4);
      // Cut, not gone: it goes on from its last event, and a reader from before the cut is told its events expired (no stream with a hole).
      expect(await size('running_old')).toBe(3);
      await expect(log.checkReplayable('t', 'running_old', -1)).rejects.toMatchObject({ code: 'stream_events_expired' });
      await log.append('t', 'running_old', [event(4, 'response.completed')]);
      expect(await collect(log, 'running_old', 2)).toEqual([3, 4]);
    } finally {
      await log.close();
    }
  });
});

describe('event log in memory, read while it sheds', () => {
  it('a finished log someone is reading is not the first to go; a running one forgotten is cut, not restarted as if whole', async () => {
    const log = new MemoryEventLog({ maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60, maxTotalBytes: 600 });
    try {
      await log.append('t', 'read_old', [event(0, 'response.created'), event(1, 'response.completed')]);
      await log.append('t', 'unread', [event(0, 'response.created'), event(1, 'response.completed')]);
      // A reader holds the older log open (between batches: no waiter of the log's, still its reader).
      const reader = log.follow('t', 'read_old', { after: -1, signal: never(), stillRunning: async () => false });
      expect((await reader.next()).value?.map((entry: LoggedEvent) => entry.sequence)).toEqual([0, 1]);
      await log.append('t', 'big', [event(0, 'response.created'), event(1), event(2), event(3), event(4), event(5)]);
      expect(await log.lastSequence('t', 'unread')).toBe(-1);
      expect(await log.lastSequence('t', 'read_old')).toBe(1);
      await reader.return(undefined);

      // Forgotten while running (the store let it go; it will be stored again when it ends): cut to its last event, marked trimmed.
      log.forget('t', 'big');
      await expect(log.checkReplayable('t', 'big', -1)).rejects.toMatchObject({ code: 'stream_events_expired' });
      await log.append('t', 'big', [event(6, 'response.completed')]);
      expect(await collect(log, 'big', 4)).toEqual([5, 6]);
      // Forgotten once finished: gone.
      log.forget('t', 'big');
      expect(await log.lastSequence('t', 'big')).toBe(-1);
    } finally {
      await log.close();
    }
  });
});

describe('event log in memory beside the memory store', () => {
  it('a background response the store pushes out takes its events with it; a deleted one too', async () => {
    const config = GatewayConfig.parse({ providers: {}, store: { maxEntries: 1 } });
    const background = createBackgroundStores(config);
    const store = createStore(config.store, config.loop.deadlineMs, undefined, background.forgetEvents ?? undefined);
    try {
      await background.events.append('t', 'resp_1', [event(0, 'response.created'), event(1, 'response.completed')]);
      await store.put(record('t', 'resp_1', null));
      await background.events.append('t', 'resp_2', [event(0, 'response.created'), event(1, 'response.completed')]);
      await store.put(record('t', 'resp_2', null));
      expect(await background.events.lastSequence('t', 'resp_1')).toBe(-1);
      expect(await background.events.lastSequence('t', 'resp_2')).toBe(1);
      await store.delete('t', 'resp_2');
      expect(await background.events.lastSequence('t', 'resp_2')).toBe(-1);
    } finally {
      await store.close();
      await background.close();
    }
  });
});

function redisContract(name: string, connect: () => Promise<{ client: RedisClient; prefix: string; stop(): Promise<void> }>) {
  contract(name, async () => {
    const { client, prefix, stop } = await connect();
    const logs: RedisEventLog[] = [];
    return {
      make: (limits) => {
        const log = new RedisEventLog({ client, keys: new RedisKeys(prefix), limits, readyWaitMs: 5_000 });
        logs.push(log);
        return log;
      },
      tearDown: async () => {
        await Promise.all(logs.map((log) => log.close()));
        client.disconnect();
        await stop();
      },
    };
  });
}

redisContract('redis', async () => {
  const redis: TestRedis = await acquireRedis();
  return {
    client: connectRedis({ url: redis.url, commandTimeoutMs: 2_000 }),
    prefix: redis.prefix(),
    stop: async () => {
      await redis.cleanup();
      await redis.stop();
    },
  };
});

redisContract('redis-cluster', async () => {
  const cluster: TestRedisCluster = await startRedisCluster();
  return { client: connectRedis({ url: '', clusterNodes: cluster.nodes, commandTimeoutMs: 2_000 }), prefix: 'events-test:', stop: () => cluster.stop() };
});

describe('event log on redis, deleted', () => {
  it('leaves no key of the response behind: the stream and its byte counter both go', async () => {
    const redis = await acquireRedis();
    const client = connectRedis({ url: redis.url, commandTimeoutMs: 2_000 });
    const prefix = redis.prefix();
    const log = new RedisEventLog({ client, keys: new RedisKeys(prefix), limits: { maxEvents: 100, maxBytes: 1_000_000, ttlSeconds: 60 }, readyWaitMs: 5_000 });
    try {
      await log.append('t', 'resp_gone', [event(0, 'response.created'), event(1, 'response.completed')]);
      expect(await client.keys(`${prefix}*resp_gone*`)).toHaveLength(2);
      await log.delete('t', 'resp_gone');
      expect(await client.keys(`${prefix}*resp_gone*`)).toEqual([]);
    } finally {
      await log.close();
      client.disconnect();
      await redis.cleanup();
      await redis.stop();
    }
  });
});
