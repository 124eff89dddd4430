import { invalidRequest } from '../errors/gateway-error.ts';
import { responseError } from '../protocol/response-error.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';
import type { BackgroundRef, BackgroundRegistry } from '../store/background-registry.ts';
import { isTerminalEvent, type LoggedEvent, type ResponseEventLog } from '../store/response-event-log.ts';
import type { ResponseStore, StoredResponse } from '../store/response-store.ts';
import type { StoreLogger } from '../store/connection-events-log.ts';
import { OWNER_LOST_MESSAGE } from './response-deadline.ts';

export interface BackgroundOptions {
  store: ResponseStore;
  events: ResponseEventLog;
  registry: BackgroundRegistry;
  /** How long an owner's lease runs unrenewed; a replica silent this long is presumed dead. */
  leaseMs: number;
  log: StoreLogger;
}

/** How the runner stops a response it runs: cancelled (by a client), or its lease lost. */
export type BackgroundStop = 'cancelled' | 'owner_lost';

interface Owned {
  ref: BackgroundRef;
  stop(how: BackgroundStop): void;
}

/** Orphans claimed per round trip of the reaper. */
const REAP_BATCH = 100;

/** Tries, spread over one lease, at keeping a response's last events when the store was away as it ended. */
const FINAL_APPEND_ATTEMPTS = 5;

/** How often a cancel looks whether the response has ended. */
const CANCEL_POLL_MS = 50;

/** Ends that are not a state of their own: the loop (or the reaper) decided. */
const TERMINAL_STATUSES = new Set<ResponseResource['status']>(['completed', 'failed', 'incomplete', 'cancelled', 'requires_action']);

export function isFinished(response: ResponseResource): boolean {
  return TERMINAL_STATUSES.has(response.status);
}

/**
 * Runs background responses detached from any connection: each one's events
 * go to the event log (for pollers, streams and resumes on any replica), its
 * record is kept current in the store, and its lease is renewed while it
 * runs. The same tick claims responses whose owner's lease lapsed (a replica
 * that died) and ends them as `failed`, so none stays `in_progress` forever.
 */
export class BackgroundRunner {
  readonly #options: BackgroundOptions;
  readonly #owned = new Map<string, Owned>();
  readonly #idleWaiters = new Set<() => void>();
  readonly #tick: NodeJS.Timeout;
  #ticking = false;
  #renewalFailing = false;

  constructor(options: BackgroundOptions) {
    this.#options = options;
    options.registry.onCancel((ref) => this.#owned.get(keyOf(ref))?.stop('cancelled'));
    // Renew well inside the lease, so a slow Redis round trip or two never lets it lapse.
    this.#tick = setInterval(() => void this.#renewAndReap(), Math.max(50, Math.floor(options.leaseMs / 5)));
    this.#tick.unref();
  }

  /** How many background responses this replica runs now. */
  get running(): number {
    return this.#owned.size;
  }

  /** Whether this replica runs the response (a cancel can then act at once). */
  owns(ref: BackgroundRef): boolean {
    return this.#owned.has(keyOf(ref));
  }

  /** Cancels a response this replica runs; false when it runs elsewhere (or not at all). */
  cancelLocal(ref: BackgroundRef): boolean {
    const owned = this.#owned.get(keyOf(ref));
    owned?.stop('cancelled');
    return owned !== undefined;
  }

  /**
   * Takes a queued response: leases it to this replica, stores it as
   * `queued`, then runs its events to the end in the background. Rejects
   * (before anything runs, nothing left behind) when the lease or the record
   * cannot be written.
   */
  async start(record: StoredResponse, events: AsyncGenerator<ResponseStreamEvent[]>, stop: (how: BackgroundStop) => void, requestId: string | null = null): Promise<void> {
    const ref = { tenant: record.tenant, id: record.response.id };
    const { registry, store, leaseMs } = this.#options;
    try {
      await registry.register(ref, leaseMs);
      try {
        await store.put(structuredClone(record));
      } catch (error) {
        await registry.unregister(ref).catch(() => {});
        throw error;
      }
    } catch (error) {
      stop('cancelled');
      // Ends the loop before its first step: nothing ran, nothing to store.
      await events.return(undefined);
      throw error;
    }
    this.#owned.set(keyOf(ref), { ref, stop });
    void this.#drive(ref, record, events, requestId);
  }

  /**
   * `POST /v1/responses/{id}/cancel`: stops the response wherever it runs
   * (here at once; elsewhere through the registry) and waits, at most
   * `waitMs`, for its final record. A finished response is returned as it is
   * (cancelling twice is idempotent); null when there is no such response.
   */
  async cancel(ref: BackgroundRef, waitMs: number): Promise<StoredResponse | null> {
    const record = await this.#options.store.get(ref.tenant, ref.id);
    if (!record) return null;
    if (!record.response.background) throw invalidRequest('Only responses created with background=true can be cancelled.', null, 'response_not_cancellable');
    return isFinished(record.response) ? record : this.#stop(ref, waitMs);
  }

  /**
   * Before `DELETE /v1/responses/{id}`: a background response still running
   * is stopped, and its final record awaited (at most `waitMs`), since a run
   * that went on would store the response again when it ended, and keep
   * spending on its model calls. Anything else is left as it is.
   */
  async stopBeforeDelete(ref: BackgroundRef, waitMs: number): Promise<void> {
    const record = await this.#options.store.get(ref.tenant, ref.id);
    if (record?.response.background && !isFinished(record.response)) await this.#stop(ref, waitMs);
  }

  /** Cancels a running response (here at once, elsewhere through the registry) and waits, at most `waitMs`, for its final record. */
  async #stop(ref: BackgroundRef, waitMs: number): Promise<StoredResponse | null> {
    const { store, registry } = this.#options;
    if (!this.cancelLocal(ref)) await registry.requestCancel(ref);
    const deadline = performance.now() + waitMs;
    let record: StoredResponse | null;
    do {
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
      record = await store.get(ref.tenant, ref.id);
    } while (record && !isFinished(record.response) && performance.now() < deadline);
    return record;
  }

  /** Resolves when no background response runs here any more, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.#owned.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#idleWaiters.add(done);
    });
  }

  close(): void {
    clearInterval(this.#tick);
  }

  async #drive(ref: BackgroundRef, record: StoredResponse, events: AsyncGenerator<ResponseStreamEvent[]>, requestId: string | null): Promise<void> {
    const { store, events: log } = this.#options;
    const startedAt = performance.now();
    /** Events the log has not taken yet (the store was away): sent again, first, with the next batch. */
    let unsent: LoggedEvent[] = [];
    /** Whether the stored record surely holds the ending (see `#release`). */
    let settled = false;
    /** The ending its readers were sent: stored again if the first write of it failed. */
    let ending: ResponseResource | null = null;
    try {
      for await (const batch of events) {
        const last = batch.at(-1)!;
        if (last.type === 'response.completed' || last.type === 'response.failed' || last.type === 'response.incomplete') {
          const final = last.response;
          // Any other ending was stored before its terminal event was made; a failure may be the store's own.
          settled = final.status !== 'failed';
          ending = final;
          this.#options.log.info(
            // The request that created it, so this line (the one saying why it failed) ties to that request's lines.
            { ...(requestId && { request_id: requestId }), response_id: ref.id, tenant: ref.tenant, model: final.model, status: final.status, ...(final.incomplete_details && { reason: final.incomplete_details.reason }), ...(final.error && { error_code: final.error.code }), background: true, input_tokens: final.usage?.input_tokens ?? 0, output_tokens: final.usage?.output_tokens ?? 0, duration_ms: Math.round(performance.now() - startedAt) },
            'background response finished',
          );
        }
        for (const event of batch) unsent.push(toLoggedEvent(event));
        try {
          await log.append(ref.tenant, ref.id, unsent);
          unsent = [];
        } catch (error) {
          // Kept for the next append: readers get every event, in order, only later. (Ones still unsent when the response ends are lost to them; the record still ends right.)
          if (unsent.length === batch.length) this.#options.log.error({ response_id: ref.id, err: error }, 'background response: events could not be kept yet; sent again with the next ones');
        }
        // The last events wait for the store a while (within a lease): readers wait for the terminal one.
        for (let attempt = 1; unsent.length > 0 && isTerminalEvent(last.type) && attempt <= FINAL_APPEND_ATTEMPTS; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, this.#options.leaseMs / FINAL_APPEND_ATTEMPTS));
          await log.append(ref.tenant, ref.id, unsent).then(() => (unsent = []), () => {});
        }
        if (batch.some((event) => event.type === 'response.in_progress')) {
          await store.put(structuredClone({ ...record, response: { ...record.response, status: 'in_progress' } })).catch((error: unknown) => {
            this.#options.log.warn({ response_id: ref.id, err: error }, 'background response: in_progress status not stored');
          });
        }
      }
    } catch (error) {
      settled = false;
      this.#options.log.error({ response_id: ref.id, err: error }, 'background response failed outside its event stream');
    } finally {
      this.#owned.delete(keyOf(ref));
      await this.#release(ref, settled, ending);
      if (this.#owned.size === 0) for (const wake of [...this.#idleWaiters]) wake();
    }
  }

  /**
   * Gives up the lease of a response this replica stopped running. The
   * ending its stream's readers got — the first terminal event in its log,
   * this replica's or, when its lease lapsed during a stall, a reaper's — is
   * what stays stored: stored again when this replica's own write failed (the
   * store was away, a slot moving) or lost to a reaper's. When no ending can
   * be stored, the lease is kept, no longer renewed: it lapses and a reaper
   * ends the response once the store answers, so it never stays
   * `in_progress`.
   */
  async #release(ref: BackgroundRef, settled: boolean, ending: ResponseResource | null): Promise<void> {
    const { store, registry, log } = this.#options;
    try {
      const told = ending ? await this.#loggedEnding(ref) : null;
      if (told && (!settled || !sameEnding(told, ending!))) {
        const record = await store.get(ref.tenant, ref.id);
        if (record) await store.put({ ...record, response: told });
      } else if (!settled) {
        const record = await store.get(ref.tenant, ref.id);
        if (record && !isFinished(record.response)) {
          log.warn({ response_id: ref.id }, 'background response: its ending could not be stored; its lease is left to lapse, and a reaper ends it as failed');
          return;
        }
      }
      await registry.unregister(ref);
    } catch {
      // The store or registry is away: the lease lapses, and a reaper ends the response if it is unfinished.
    }
  }

  /** The ending the response's stream was sent: its log's first terminal event (nothing follows one); null when there is none. */
  async #loggedEnding(ref: BackgroundRef): Promise<ResponseResource | null> {
    return endingOf(await this.#options.events.lastEvent(ref.tenant, ref.id));
  }

  async #renewAndReap(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    const { registry, leaseMs } = this.#options;
    try {
      const owned = [...this.#owned.values()].map((entry) => entry.ref);
      const { cancelled, lost } = await registry.renew(owned, leaseMs);
      for (const ref of cancelled) this.#owned.get(keyOf(ref))?.stop('cancelled');
      for (const ref of lost) {
        // Redis saw no renewal within the lease (this replica, or Redis itself, stalled that long): a reaper ends it as failed, and so does this replica, never both running on.
        this.#options.log.warn({ response_id: ref.id }, 'background response: its lease lapsed before it was renewed; ending it as failed (response_owner_lost)');
        this.#owned.get(keyOf(ref))?.stop('owner_lost');
      }
      // A replica that died may leave hundreds: claimed in batches, ended concurrently within a batch.
      for (;;) {
        const claimed = await registry.claimExpired(REAP_BATCH, leaseMs);
        await Promise.all(claimed.map((ref) => this.#endOrphan(ref).catch((error: unknown) => this.#options.log.warn({ response_id: ref.id, err: error }, 'background response: could not end an orphan; its claim lapses and it is claimed again'))));
        if (claimed.length < REAP_BATCH) break;
      }
      if (this.#renewalFailing) this.#options.log.info({}, 'background responses: lease renewal works again');
      this.#renewalFailing = false;
    } catch (error) {
      // Once per outage: the store's own connection log already reports the outage itself.
      if (!this.#renewalFailing) this.#options.log.warn({ err: error }, 'background responses: lease renewal failed; retrying every tick');
      this.#renewalFailing = true;
    } finally {
      this.#ticking = false;
    }
  }

  /**
   * Ends a response whose owner stopped: stored as `failed`, its stream
   * closed with the terminal event — or, when its stream already ended (the
   * owner sent the ending but could not store it), stored with the ending
   * its readers were sent, so that the two never disagree.
   */
  async #endOrphan(ref: BackgroundRef): Promise<void> {
    const { store, events, registry } = this.#options;
    const record = await store.get(ref.tenant, ref.id);
    if (record && !isFinished(record.response)) {
      const last = await events.lastEvent(ref.tenant, ref.id);
      const logged = endingOf(last);
      if (logged) {
        await store.put({ ...record, response: logged });
        this.#options.log.warn({ response_id: ref.id, tenant: ref.tenant }, 'background response: its owner could not store its ending; stored now, as its stream ended');
      } else {
        const response: ResponseResource = { ...record.response, status: 'failed', completed_at: null, error: responseError('response_owner_lost', OWNER_LOST_MESSAGE) };
        await store.put({ ...record, response });
        await events.append(ref.tenant, ref.id, [toLoggedEvent({ type: 'response.failed', response, sequence_number: (last?.sequence ?? -1) + 1 })]);
        // The owner, stalled rather than gone, may have sent its own ending first: the one the stream got is the one kept.
        const told = await this.#loggedEnding(ref);
        if (told && !sameEnding(told, response)) await store.put({ ...record, response: told });
        this.#options.log.warn({ response_id: ref.id, tenant: ref.tenant }, 'background response: its owner stopped renewing its lease; ended as failed');
      }
    }
    // Ended (now or before): the claim is done with.
    await registry.unregister(ref);
  }
}

/** The response a logged terminal event carries; null for any other event, or none. */
function endingOf(event: LoggedEvent | null): ResponseResource | null {
  return event && isTerminalEvent(event.type) ? (JSON.parse(event.json) as { response: ResponseResource }).response : null;
}

/** Two endings of one response alike: the same status, for the same reason. */
function sameEnding(a: ResponseResource, b: ResponseResource): boolean {
  return a.status === b.status && a.error?.code === b.error?.code && a.incomplete_details?.reason === b.incomplete_details?.reason;
}

function toLoggedEvent(event: ResponseStreamEvent): LoggedEvent {
  return { sequence: event.sequence_number, type: event.type, json: JSON.stringify(event) };
}

function keyOf(ref: BackgroundRef): string {
  return `${ref.tenant}\n${ref.id}`;
}
