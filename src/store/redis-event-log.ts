import { withinTime } from '../util/within-time.ts';
import { duplicateForBlocking, runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';
import { storeUnavailable } from './response-store.ts';
import { eventsExpired, isTerminalEvent, type EventLogLimits, type FollowOptions, type LoggedEvent, type ResponseEventLog } from './response-event-log.ts';

/**
 * Appends events and enforces both bounds in one round trip. Entry ids are
 * `<sequence>-1`, so `starting_after=N` is simply `XREAD … <N>-1` and the
 * first kept id tells whether anything was dropped. Events already there are
 * passed over, so a batch sent again (its first sending timed out, but Redis
 * ran it) adds only what is new; once a terminal event is in, nothing
 * follows it (a replica that stalled past its lease, whose response a reaper
 * ended meanwhile, appends nothing after that end). The bounds drop only
 * entries from before the batch (see memory-event-log.ts). KEYS: the stream, its
 * byte counter (same hash tag). ARGV: max events, max bytes, ttl seconds,
 * then sequence, type, JSON per event.
 */
const APPEND_SCRIPT = `
local maxEvents, maxBytes, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local bytes = tonumber(redis.call('GET', KEYS[2]) or '0')
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
local last = top and tonumber(string.match(top[1], '^(%d+)')) or -1
local terminal = { ['response.completed'] = true, ['response.failed'] = true, ['response.incomplete'] = true }
local closed = top ~= nil and terminal[top[2][2]] == true
for i = 4, #ARGV, 3 do
  if not closed and tonumber(ARGV[i]) > last then
    redis.call('XADD', KEYS[1], ARGV[i] .. '-1', 't', ARGV[i + 1], 'd', ARGV[i + 2])
    bytes = bytes + #ARGV[i + 2]
    closed = terminal[ARGV[i + 1]] == true
  end
end
local length = redis.call('XLEN', KEYS[1])
-- Only entries from before this batch go (a batch sent again, already held, is this batch all the same):
-- a follower that had read them all must still get the whole batch.
local before = (#ARGV >= 4) and tonumber(ARGV[4]) - 1 or last
while before >= 0 and length > 1 and (length > maxEvents or bytes > maxBytes) do
  local oldest = redis.call('XRANGE', KEYS[1], '-', before .. '-1', 'COUNT', 100)
  if #oldest == 0 then break end
  for _, entry in ipairs(oldest) do
    if length <= 1 or (length <= maxEvents and bytes <= maxBytes) then break end
    bytes = bytes - #entry[2][4]
    redis.call('XDEL', KEYS[1], entry[1])
    length = length - 1
  end
end
redis.call('SET', KEYS[2], bytes, 'EX', ttl)
redis.call('EXPIRE', KEYS[1], ttl)
return length
`;

/** How long one blocking read waits before asking whether the response still runs. */
const BLOCK_MS = 5_000;
/** Most entries one read returns. */
const READ_COUNT = 1_000;
/**
 * How long a follower keeps reading again through an outage (a failover
 * unblocks or cuts its read; a hung node never answers it) before its
 * stream ends saying the store is unavailable. Longer than a failover.
 */
const FOLLOW_OUTAGE_MS = 15_000;
/** The pause before reading again after a failed read, doubled up to the most. */
const REREAD_PAUSE_MS = { first: 100, most: 2_000 };

type StreamEntry = [id: string, fields: string[]];

interface EventLogCommands {
  loopgateAppendEvents(stream: string, bytes: string, ...args: (string | number)[]): Promise<number>;
}

/**
 * Background responses' events in Redis Streams: `XADD` under both bounds,
 * replay with `XRANGE`/`XREAD`, following with `XREAD BLOCK` on a connection
 * of the reader's own (a blocked connection can serve nothing else), dropped
 * when the reader goes.
 */
export class RedisEventLog implements ResponseEventLog {
  readonly #client: RedisClient & EventLogCommands;
  readonly #keys: RedisKeys;
  readonly #limits: EventLogLimits;
  readonly #readers = new Set<RedisClient>();
  readonly #readyWaitMs: number;

  constructor(options: { client: RedisClient; keys: RedisKeys; limits: EventLogLimits; readyWaitMs: number }) {
    this.#client = options.client as RedisClient & EventLogCommands;
    this.#readyWaitMs = options.readyWaitMs;
    this.#keys = options.keys;
    this.#limits = options.limits;
    this.#client.defineCommand('loopgateAppendEvents', { numberOfKeys: 2, lua: APPEND_SCRIPT });
  }

  async append(tenant: string, id: string, events: readonly LoggedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const stream = this.#keys.events(tenant, id);
    const args: (string | number)[] = [this.#limits.maxEvents, this.#limits.maxBytes, this.#limits.ttlSeconds];
    for (const event of events) args.push(event.sequence, event.type, event.json);
    await this.#run(() => this.#client.loopgateAppendEvents(stream, `${stream}:bytes`, ...args));
  }

  async delete(tenant: string, id: string): Promise<void> {
    const stream = this.#keys.events(tenant, id);
    // One hash tag: one slot, one command on a cluster too.
    await this.#run(() => this.#client.del(stream, `${stream}:bytes`));
  }

  async lastSequence(tenant: string, id: string): Promise<number> {
    return (await this.lastEvent(tenant, id))?.sequence ?? -1;
  }

  async lastEvent(tenant: string, id: string): Promise<LoggedEvent | null> {
    const [last] = (await this.#run(() => this.#client.xrevrange(this.#keys.events(tenant, id), '+', '-', 'COUNT', 1))) as StreamEntry[];
    return last ? toLoggedEvent(last) : null;
  }

  async checkReplayable(tenant: string, id: string, after: number): Promise<void> {
    const [first] = (await this.#run(() => this.#client.xrange(this.#keys.events(tenant, id), '-', '+', 'COUNT', 1))) as StreamEntry[];
    // Sequences start at 0: a first kept event after 0 means the front was dropped.
    if (first && sequenceOf(first[0]) > Math.max(0, after + 1)) throw eventsExpired(id, sequenceOf(first[0]));
  }

  /**
   * Follows the stream from `after`. A read that fails (a failover unblocks
   * it, a connection drops) or never returns (a hung node: blocked reads
   * have no command timeout) is read again from where it stood, on a new
   * connection, for up to FOLLOW_OUTAGE_MS; only then does the follower end
   * with the store's unavailability, so no reader is cut off without a word
   * nor waits without a bound.
   */
  async *follow(tenant: string, id: string, options: FollowOptions): AsyncGenerator<LoggedEvent[]> {
    const stream = this.#keys.events(tenant, id);
    let cursor = `${Math.max(options.after, 0)}-${options.after < 0 ? 0 : 1}`;
    let reader = this.#openReader();
    const stop = () => reader.disconnect();
    options.signal.addEventListener('abort', stop, { once: true });
    let failingSince: number | null = null;
    let pause = REREAD_PAUSE_MS.first;
    try {
      while (!options.signal.aborted) {
        let entries: StreamEntry[];
        let running = true;
        try {
          const reply = (await withinTime(reader.xread('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', stream, cursor), BLOCK_MS + this.#readyWaitMs + 1_000, () => new Error('no answer from Redis to a blocked read'))) as [string, StreamEntry[]][] | null;
          entries = reply?.[0]?.[1] ?? [];
          if (entries.length === 0) running = await options.stillRunning();
        } catch (error) {
          if (options.signal.aborted) return;
          failingSince ??= performance.now();
          if (performance.now() - failingSince > FOLLOW_OUTAGE_MS) throw storeUnavailable(error);
          await new Promise((resolve) => setTimeout(resolve, pause));
          pause = Math.min(pause * 2, REREAD_PAUSE_MS.most);
          this.#closeReader(reader);
          reader = this.#openReader();
          continue;
        }
        failingSince = null;
        pause = REREAD_PAUSE_MS.first;
        if (entries.length === 0) {
          if (!running) return;
          continue;
        }
        cursor = entries.at(-1)![0];
        const batch = entries.map(toLoggedEvent);
        yield batch;
        if (isTerminalEvent(batch.at(-1)!.type)) return;
      }
    } finally {
      options.signal.removeEventListener('abort', stop);
      this.#closeReader(reader);
    }
  }

  #openReader(): RedisClient {
    const reader = duplicateForBlocking(this.#client);
    reader.on('error', () => {});
    this.#readers.add(reader);
    return reader;
  }

  #closeReader(reader: RedisClient): void {
    this.#readers.delete(reader);
    reader.disconnect();
  }

  async close(): Promise<void> {
    for (const reader of this.#readers) reader.disconnect();
    this.#readers.clear();
  }

  #run<T>(command: () => Promise<T>): Promise<T> {
    return runCommand(this.#client, this.#readyWaitMs, command);
  }
}

function sequenceOf(entryId: string): number {
  return Number(entryId.slice(0, entryId.indexOf('-')));
}

function toLoggedEvent([entryId, fields]: StreamEntry): LoggedEvent {
  // Fields are written as t, <type>, d, <json>.
  return { sequence: sequenceOf(entryId), type: fields[1]!, json: fields[3]! };
}

