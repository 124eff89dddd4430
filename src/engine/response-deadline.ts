/** Why a response was stopped before it finished on its own. */
export type StopCause =
  /** The client went away (or cancelled). */
  | 'cancelled'
  /** The whole-response deadline passed. */
  | 'deadline_exceeded'
  /** The gateway is shutting down and the drain grace ran out. */
  | 'server_shutdown';

/**
 * The abort signal of one response: fired when the client goes away, the
 * whole-response deadline passes, or the gateway stops it at shutdown. One
 * timer and one listener, both removed by `dispose()` — a hot path cannot
 * afford `AbortSignal.timeout()` (a timer that lives for the full deadline)
 * and `AbortSignal.any()` per request. Responses in flight register in
 * `inFlight` (a plain set, not a listener on a shared signal: thousands of
 * concurrent responses would each add one).
 */
export class ResponseDeadline {
  readonly #controller = new AbortController();
  readonly #client: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #inFlight: Set<ResponseDeadline> | null;
  readonly #onClientAbort = () => this.#stop('cancelled', this.#client.reason);
  #cause: StopCause | null = null;

  constructor(client: AbortSignal, deadlineMs: number, inFlight: Set<ResponseDeadline> | null = null) {
    this.#client = client;
    this.#inFlight = inFlight;
    if (client.aborted) this.#stop('cancelled', client.reason);
    // No `once`: an abort comes once, and dispose() removes the listener anyway.
    else client.addEventListener('abort', this.#onClientAbort);
    this.#timer = setTimeout(() => this.#stop('deadline_exceeded', new Error('The response deadline passed.')), deadlineMs);
    this.#timer.unref();
    inFlight?.add(this);
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
    this.#inFlight?.delete(this);
  }

  #stop(cause: StopCause, reason: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#cause = cause;
    this.#controller.abort(reason);
  }
}
