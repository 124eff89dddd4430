import type { ServerResponse } from 'node:http';

/** Told when a stream opens and when it closes (the open-streams gauge). */
export interface StreamWatcher {
  streamOpened(): void;
  streamClosed(): void;
}

/** How a stream is paced: a comment line on it after `keepAliveMs` of silence; a client that takes nothing for `stallMs` (0: no bound) is cut. */
export interface StreamPacing {
  keepAliveMs: number;
  stallMs: number;
}

/** Events that open the response or a piece of its output but carry none of what the model said: they wait for the first frame that does, and leave with it. */
const BEFORE_OUTPUT = new Set(['response.queued', 'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.reasoning_summary_part.added']);

/**
 * Writes server-sent events to a raw Node response. Whole frames only, LF
 * line ends only; the frames written in one tick go out as one chunk (a
 * response's events mostly come in bursts, and each chunk of a chunked
 * response costs three buffers on the socket) on the tick's end, when Node
 * would send them anyway. But the first frame of output leaves at once, with
 * the headers and whatever came before it: an upstream burst that arrived
 * in one read (a fast model, a buffering proxy) is processed in one go, and
 * the tick ends only after its last event, so its first token would wait
 * for all the rest. A write once the socket is full waits for `drain`
 * — or for the connection to close, so a vanished client can never leave a
 * stream hanging. Silent streams get a comment line every `keepAliveMs` so
 * proxies keep them. A client whose socket takes nothing for `stallMs`
 * (connected, but not reading) is cut: it held its response, and the
 * upstream connection the stream is read from, until the response's deadline,
 * and enough of them took every connection to that upstream from everyone else.
 */
export class SseWriter {
  readonly #raw: ServerResponse;
  readonly #keepAlive: NodeJS.Timeout;
  #closed = false;
  #waitingForDrain = false;
  /** When the current wait for `drain` began. */
  #waitingSince = 0;
  /** The socket refused the last chunk (its write returned false) and has not drained since: further frames wait. */
  #full = false;
  /** Frames of this tick not yet handed to the socket. */
  #pending = '';
  #lastWriteAt = performance.now();
  #watcher: StreamWatcher | null;
  #outputSent = false;

  constructor(raw: ServerResponse, headers: Record<string, string | number | string[]>, pacing: StreamPacing, watcher: StreamWatcher | null = null) {
    const { keepAliveMs, stallMs } = pacing;
    this.#raw = raw;
    this.#watcher = watcher;
    watcher?.streamOpened();
    raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // The headers leave with the first frames, in one write, when they are ready in this tick; a stream whose first frame must wait still gets them at once.
    process.nextTick(() => {
      if (!raw.headersSent && !this.#closed && this.#pending === '') raw.flushHeaders();
    });
    raw.once('close', () => this.#markClosed());
    raw.on('drain', () => {
      this.#full = false;
    });
    this.#keepAlive = setInterval(() => {
      if (!this.#waitingForDrain) {
        if (performance.now() - this.#lastWriteAt >= keepAliveMs) void this.write(': keep-alive\n\n');
      } else if (stallMs > 0 && performance.now() - this.#waitingSince >= stallMs) raw.destroy();
    }, Math.max(50, Math.floor(Math.min(keepAliveMs, stallMs || keepAliveMs) / 2)));
    this.#keepAlive.unref();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one event; false (or a promise of false) once the client is gone. */
  /** One event; with `id`, its SSE id (a browser's EventSource sends the last one back as `Last-Event-ID` when it reconnects). */
  event(type: string, json: string, id?: number): boolean | Promise<boolean> {
    const taken = this.write(id === undefined ? `event: ${type}\ndata: ${json}\n\n` : `id: ${id}\nevent: ${type}\ndata: ${json}\n\n`);
    if (!this.#outputSent && !BEFORE_OUTPUT.has(type)) {
      this.#outputSent = true;
      this.#flush();
      // Node corks a response's socket on each write until the next tick, which the rest of the burst puts off: uncorked, the frames leave now.
      this.#raw.socket?.uncork();
    }
    return taken;
  }

  /** True when the frame was taken at once; otherwise a promise that settles when the socket can take more. */
  write(frame: string): boolean | Promise<boolean> {
    if (this.#closed) return false;
    if (this.#pending === '') process.nextTick(this.#flush);
    this.#pending += frame;
    // Read from our own last write, not `writableNeedDrain`: a response without a real socket (inject) never drains.
    if (!this.#full) return true;
    if (this.#raw.destroyed) return false;
    return this.#drained();
  }

  readonly #flush = (): void => {
    const chunk = this.#pending;
    this.#pending = '';
    if (this.#closed || chunk === '') return;
    this.#lastWriteAt = performance.now();
    this.#full = !this.#raw.write(chunk);
  };

  async #drained(): Promise<boolean> {
    this.#waitingForDrain = true;
    this.#waitingSince = performance.now();
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
    const last = this.#pending;
    this.#pending = '';
    if (!this.#closed) this.#raw.end(last);
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
