import { monotonicNow } from '../util/monotonic-clock.ts';
import { eventsExpired, isTerminalEvent, type EventLogLimits, type FollowOptions, type LoggedEvent, type ResponseEventLog } from './response-event-log.ts';

interface Log {
  events: LoggedEvent[];
  bytes: number;
  /** Events dropped from the front so far (by the bounds). */
  dropped: boolean;
  expiresAt: number;
  /** Readers waiting for the next append. */
  waiters: Set<() => void>;
}

/** How often a quiet reader asks whether the response still runs. */
const QUIET_CHECK_MS = 5_000;

/** The embedded event log: the same bounds and replay as Redis Streams, in this process. */
export class MemoryEventLog implements ResponseEventLog {
  /** Least recently written first: a log moves to the end with each append. */
  readonly #logs = new Map<string, Log>();
  readonly #limits: EventLogLimits;
  readonly #sweep: NodeJS.Timeout;
  /** Bytes of event JSON over every log, bounded by `maxTotalBytes`: per-log bounds and a TTL alone let a busy hour of background responses hold gigabytes. */
  #totalBytes = 0;
  /** Streams being read now, by log key (a reader waiting on its own socket is no waiter of the log's, yet still reads it). */
  readonly #readers = new Map<string, number>();

  constructor(limits: EventLogLimits) {
    this.#limits = limits;
    this.#sweep = setInterval(() => this.#expire(), 60_000);
    this.#sweep.unref();
  }

  async append(tenant: string, id: string, events: readonly LoggedEvent[]): Promise<void> {
    const key = keyOf(tenant, id);
    let log = this.#logs.get(key);
    if (log) this.#logs.delete(key);
    else log = { events: [], bytes: 0, dropped: false, expiresAt: 0, waiters: new Set() };
    this.#logs.set(key, log);
    const bytesBefore = log.bytes;
    // Events it holds already (a batch sent again) are passed over, as in Redis; and once a terminal event is in, nothing follows it.
    // The events before this batch (a batch sent again, already held, is this batch all the same).
    const first = events[0]?.sequence ?? Number.POSITIVE_INFINITY;
    let eventsBefore = log.events.length;
    while (eventsBefore > 0 && log.events[eventsBefore - 1]!.sequence >= first) eventsBefore--;
    const held = log.events.at(-1);
    const last = held?.sequence ?? -1;
    let closed = held !== undefined && isTerminalEvent(held.type);
    for (const event of events) {
      if (closed || event.sequence <= last) continue;
      log.events.push(event);
      log.bytes += event.json.length;
      closed = isTerminalEvent(event.type);
    }
    // Only events from before this batch go: a follower that had read them all must still get the whole batch (a response's
    // last batch repeats its whole answer four times over, more than the bound for an answer of a few MB).
    let drop = 0;
    while (drop < eventsBefore && log.events.length - drop > 1 && (log.events.length - drop > this.#limits.maxEvents || log.bytes > this.#limits.maxBytes)) log.bytes -= log.events[drop++]!.json.length;
    if (drop > 0) {
      log.events.splice(0, drop);
      log.dropped = true;
    }
    log.expiresAt = monotonicNow() + this.#limits.ttlSeconds * 1000;
    this.#totalBytes += log.bytes - bytesBefore;
    if (this.#totalBytes > (this.#limits.maxTotalBytes ?? Number.POSITIVE_INFINITY)) this.#shed(key);
    for (const wake of log.waiters) wake();
    log.waiters.clear();
  }

  /**
   * Frees logs, least recently written first, until the total fits: the
   * logs of finished responses nobody reads go whole (as at their TTL); then
   * running ones but `keep`'s are cut to their last event and marked
   * trimmed, as the per-response bounds trim them, so a reader resuming from
   * before the cut is told its events expired, never handed a stream with a
   * hole in it.
   */
  #shed(keep: string): void {
    const limit = this.#limits.maxTotalBytes!;
    for (const [key, log] of this.#logs) {
      if (this.#totalBytes <= limit) return;
      if (key !== keep && log.waiters.size === 0 && !this.#readers.has(key) && finished(log)) this.#drop(key, log);
    }
    for (const [key, log] of this.#logs) {
      if (this.#totalBytes <= limit) return;
      if (key !== keep) this.#cut(log);
    }
  }

  /** Cuts a log to its last event, marked trimmed: it goes on from there, and a reader from before the cut is told its events expired. */
  #cut(log: Log): void {
    if (log.events.length <= 1) return;
    const last = log.events.at(-1)!;
    this.#totalBytes -= log.bytes - last.json.length;
    log.events = [last];
    log.bytes = last.json.length;
    log.dropped = true;
  }

  #drop(key: string, log: Log): void {
    this.#logs.delete(key);
    this.#totalBytes -= log.bytes;
    // A reader rereads, finds nothing, and stops once the response is found not running.
    for (const wake of log.waiters) wake();
  }

  async lastSequence(tenant: string, id: string): Promise<number> {
    return this.#live(keyOf(tenant, id))?.events.at(-1)?.sequence ?? -1;
  }

  async lastEvent(tenant: string, id: string): Promise<LoggedEvent | null> {
    return this.#live(keyOf(tenant, id))?.events.at(-1) ?? null;
  }

  async checkReplayable(tenant: string, id: string, after: number): Promise<void> {
    const log = this.#live(keyOf(tenant, id));
    const first = log?.events[0];
    if (first && log.dropped && first.sequence > after + 1) throw eventsExpired(id, first.sequence);
  }

  async *follow(tenant: string, id: string, options: FollowOptions): AsyncGenerator<LoggedEvent[]> {
    const key = keyOf(tenant, id);
    let after = options.after;
    this.#readers.set(key, (this.#readers.get(key) ?? 0) + 1);
    try {
      for (;;) {
        const log = this.#live(key);
        const batch = log ? log.events.filter((event) => event.sequence > after) : [];
        if (batch.length > 0) {
          after = batch.at(-1)!.sequence;
          yield batch;
          if (isTerminalEvent(batch.at(-1)!.type)) return;
          continue;
        }
        if (options.signal.aborted) return;
        const woken = await this.#nextAppend(key, options.signal);
        if (!woken && !options.signal.aborted && !(await options.stillRunning())) return;
      }
    } finally {
      const left = this.#readers.get(key)! - 1;
      if (left === 0) this.#readers.delete(key);
      else this.#readers.set(key, left);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    for (const log of this.#logs.values()) for (const wake of log.waiters) wake();
    this.#logs.clear();
    this.#totalBytes = 0;
  }

  /** Resolves true on the next append, false after a quiet while or on abort. */
  #nextAppend(key: string, signal: AbortSignal): Promise<boolean> {
    let log = this.#logs.get(key);
    if (!log) this.#logs.set(key, (log = { events: [], bytes: 0, dropped: false, expiresAt: monotonicNow() + this.#limits.ttlSeconds * 1000, waiters: new Set() }));
    const waiters = log.waiters;
    return new Promise<boolean>((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        waiters.delete(wake);
        resolve(woken);
      };
      const wake = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), QUIET_CHECK_MS);
      signal.addEventListener('abort', onAbort, { once: true });
      waiters.add(wake);
    });
  }

  async delete(tenant: string, id: string): Promise<void> {
    this.forget(tenant, id);
  }

  /**
   * `delete`, at once: for the memory store, which lets responses go on the
   * request path and must not pay a promise for each. A response still
   * running (pushed out of the store, to be stored again when it ends) keeps
   * its log cut to its last event, so its later events do not start a log
   * that would pass for whole.
   */
  forget(tenant: string, id: string): void {
    const key = keyOf(tenant, id);
    const log = this.#logs.get(key);
    if (!log) return;
    if (finished(log)) this.#drop(key, log);
    else this.#cut(log);
  }

  #live(key: string): Log | null {
    const log = this.#logs.get(key);
    if (!log) return null;
    if (log.expiresAt <= monotonicNow() && log.waiters.size === 0) {
      this.#drop(key, log);
      return null;
    }
    return log;
  }

  #expire(): void {
    for (const key of [...this.#logs.keys()]) this.#live(key);
  }
}

function finished(log: Log): boolean {
  return isTerminalEvent(log.events.at(-1)?.type ?? '');
}

function keyOf(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}
