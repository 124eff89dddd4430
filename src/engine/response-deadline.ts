/**
 * The abort signal of one response: fired when the client goes away or the
 * whole-response deadline passes. One timer and one listener, both removed
 * by `dispose()` — a hot path cannot afford `AbortSignal.timeout()` (a timer
 * that lives for the full deadline) and `AbortSignal.any()` per request.
 */
export class ResponseDeadline {
  readonly #controller = new AbortController();
  readonly #client: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #onClientAbort = () => this.#controller.abort(this.#client.reason);
  #expired = false;

  constructor(client: AbortSignal, deadlineMs: number) {
    this.#client = client;
    if (client.aborted) this.#controller.abort(client.reason);
    else client.addEventListener('abort', this.#onClientAbort, { once: true });
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.#controller.abort(new Error('The response deadline passed.'));
    }, deadlineMs);
    this.#timer.unref();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the deadline (not the client) ended the response. */
  get expired(): boolean {
    return this.#expired;
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#client.removeEventListener('abort', this.#onClientAbort);
  }
}
