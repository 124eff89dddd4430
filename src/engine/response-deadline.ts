/** Why a response was stopped before it finished on its own. */
export type StopCause =
  /** The client went away (or cancelled). */
  | 'cancelled'
  /** The whole-response deadline passed. */
  | 'deadline_exceeded'
  /** The gateway is shutting down and the drain grace ran out. */
  | 'server_shutdown'
  /** A background response whose lease lapsed (its replica was presumed dead): a reaper ends it `failed`, and so does its owner. */
  | 'owner_lost';

/** What a background response ended for `owner_lost` says, whoever ends it (the reaper or its owner). */
export const OWNER_LOST_MESSAGE = 'The gateway instance running this background response did not renew its lease in time (it stopped, or lost its store) before the response finished; start it again.';

/** The abort reason a background response's owner stops it with when its lease was lost (see `StopCause`). */
export class LeaseLost extends Error {
  constructor() {
    super('The lease on this background response lapsed; it is ended as failed.');
  }
}

/**
 * The responses running now, for a shutdown to stop: an array in which each
 * deadline knows its place, so leaving is a swap with the last one. Not a
 * `Set`: a long-lived V8 hash set that gains and loses an entry per response
 * rebuilds its table every few dozen responses, and each discarded table,
 * already in the old generation, keeps the deadlines it held (their signals,
 * timers and listeners) alive through young collections until the next full
 * one: measured under load, three fifths of what the gateway promoted per
 * response (about 890 of 1,460 bytes, by --trace-gc-nvp) came from that.
 */
export class InFlightResponses {
  readonly #deadlines: ResponseDeadline[] = [];

  get size(): number {
    return this.#deadlines.length;
  }

  /** A copy: stopping a response removes it from here. */
  all(): ResponseDeadline[] {
    return [...this.#deadlines];
  }

  /** Its place in the array, which it keeps for `leave`. */
  enter(deadline: ResponseDeadline): number {
    return this.#deadlines.push(deadline) - 1;
  }

  /** Removes the deadline at `place`; the last one moves there and is told its new place. */
  leave(place: number): void {
    const last = this.#deadlines.pop()!;
    if (place === this.#deadlines.length) return;
    this.#deadlines[place] = last;
    last.movedTo(place);
  }
}

/**
 * The abort signal of one response: fired when the client goes away, the
 * whole-response deadline passes, or the gateway stops it at shutdown. One
 * timer and one listener, both removed by `dispose()` — a hot path cannot
 * afford `AbortSignal.timeout()` (a timer that lives for the full deadline)
 * and `AbortSignal.any()` per request. Responses in flight register in
 * `inFlight` (not a listener on a shared signal: thousands of concurrent
 * responses would each add one).
 */
export class ResponseDeadline {
  readonly #controller = new AbortController();
  readonly #client: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #inFlight: InFlightResponses | null;
  /** Where it stands in `inFlight`; -1 when it is not (or no longer) there. */
  #place = -1;
  readonly #onClientAbort = () => this.#stop(this.#client.reason instanceof LeaseLost ? 'owner_lost' : 'cancelled', this.#client.reason);
  #cause: StopCause | null = null;

  constructor(client: AbortSignal, deadlineMs: number, inFlight: InFlightResponses | null = null) {
    this.#client = client;
    this.#inFlight = inFlight;
    if (client.aborted) this.#onClientAbort();
    // No `once`: an abort comes once, and dispose() removes the listener anyway.
    else client.addEventListener('abort', this.#onClientAbort);
    this.#timer = setTimeout(() => this.#stop('deadline_exceeded', new Error('The response deadline passed.')), deadlineMs);
    this.#timer.unref();
    if (inFlight) this.#place = inFlight.enter(this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** What stopped the response; null while it runs (or when it ended on its own). */
  get cause(): StopCause | null {
    return this.#cause;
  }

  /** Stops the response because the gateway is shutting down. */
  shutDown(): void {
    this.#stop('server_shutdown', new Error('The gateway is shutting down.'));
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#client.removeEventListener('abort', this.#onClientAbort);
    if (this.#place < 0) return;
    this.#inFlight!.leave(this.#place);
    this.#place = -1;
  }

  /** Told by `InFlightResponses` when it moved this deadline to another place. */
  movedTo(place: number): void {
    this.#place = place;
  }

  #stop(cause: StopCause, reason: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#cause = cause;
    this.#controller.abort(reason);
  }
}
