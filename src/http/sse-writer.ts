import type { ServerResponse } from 'node:http';

/** Told when a stream opens and when it closes (the open-streams gauge). */
export interface StreamWatcher {
  streamOpened(): void;
  streamClosed(): void;
}

/**
 * Writes server-sent events to a raw Node response. Each frame is one
 * `write()` call (clients lose events split across reads), LF line ends only,
 * and a write the socket cannot take yet waits for `drain` — or for the
 * connection to close, so a vanished client can never leave a stream hanging.
 * Silent streams get a comment line every `keepAliveMs` so proxies keep them.
 */
export class SseWriter {
  readonly #raw: ServerResponse;
  readonly #keepAlive: NodeJS.Timeout;
  #closed = false;
  #waitingForDrain = false;
  #lastWriteAt = Date.now();
  #watcher: StreamWatcher | null;

  constructor(raw: ServerResponse, headers: Record<string, string | number | string[]>, keepAliveMs: number, watcher: StreamWatcher | null = null) {
    this.#raw = raw;
    this.#watcher = watcher;
    watcher?.streamOpened();
    raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // The headers leave with the first frame, in one write, when it is ready in this tick (Node corks a response's writes per tick); a stream whose first frame must wait still gets them at once.
    process.nextTick(() => {
      if (!raw.headersSent && !this.#closed) raw.flushHeaders();
    });
    raw.once('close', () => this.#markClosed());
    this.#keepAlive = setInterval(() => {
      if (!this.#waitingForDrain && Date.now() - this.#lastWriteAt >= keepAliveMs) void this.write(': keep-alive\n\n');
    }, Math.max(50, Math.floor(keepAliveMs / 2)));
    this.#keepAlive.unref();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one event; false (or a promise of false) once the client is gone. */
  event(type: string, json: string): boolean | Promise<boolean> {
    return this.write(`event: ${type}\ndata: ${json}\n\n`);
  }

  /** True when the socket took the frame at once; otherwise a promise that settles when it can take more. */
  write(frame: string): boolean | Promise<boolean> {
    if (this.#closed) return false;
    this.#lastWriteAt = Date.now();
    if (this.#raw.write(frame)) return true;
    if (this.#raw.destroyed) return false;
    return this.#drained();
  }

  async #drained(): Promise<boolean> {
    this.#waitingForDrain = true;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.#raw.off('drain', done);
        this.#raw.off('close', done);
        resolve();
      };
      this.#raw.on('drain', done);
      this.#raw.on('close', done);
    });
    this.#waitingForDrain = false;
    return !this.#closed;
  }

  end(): void {
    clearInterval(this.#keepAlive);
    if (!this.#closed) this.#raw.end();
    this.#closed = true;
    this.#unwatch();
  }

  #markClosed(): void {
    this.#closed = true;
    clearInterval(this.#keepAlive);
    this.#unwatch();
  }

  #unwatch(): void {
    this.#watcher?.streamClosed();
    this.#watcher = null;
  }
}
