import type { WebSocket } from 'ws';

/** Bytes queued on a socket beyond which the event stream waits for the peer (as an SSE stream waits for `drain`). */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * Sends text frames with backpressure: a frame the socket takes at once is
 * done; once more than `HIGH_WATER_MARK` bytes wait to be written, the sender
 * waits until that frame has left (or the socket closed), so a slow reader
 * slows the stream instead of growing the gateway's memory.
 */
export class SocketWriter {
  readonly #socket: WebSocket;
  /** Characters handed to the socket so far, and what the peer had taken by the last look (`stalledMs`): a close enough count of its progress. */
  #sent = 0;
  #taken = 0;
  #progressAt = performance.now();

  constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  get open(): boolean {
    return this.#socket.readyState === this.#socket.OPEN;
  }

  /** Whether frames wait in the gateway for the peer to take them (its socket full). */
  get waiting(): boolean {
    return this.#socket.bufferedAmount > 0;
  }

  /** How long the peer has taken nothing of what waits for it: 0 while nothing waits, or when it took some since the last look. */
  stalledMs(now = performance.now()): number {
    const buffered = this.#socket.bufferedAmount;
    const taken = this.#sent - buffered;
    if (buffered === 0 || taken > this.#taken) this.#progressAt = now;
    this.#taken = Math.max(this.#taken, taken);
    return now - this.#progressAt;
  }

  /** True when sent without waiting; otherwise a promise of whether the socket is still open. False once closed. */
  send(json: string): boolean | Promise<boolean> {
    if (!this.open) return false;
    this.#sent += json.length;
    if (this.#socket.bufferedAmount < HIGH_WATER_MARK) {
      this.#socket.send(json);
      return true;
    }
    return new Promise((resolve) => {
      this.#socket.send(json, (error) => resolve(!error && this.open));
    });
  }
}
