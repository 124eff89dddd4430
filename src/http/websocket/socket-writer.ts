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

  constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  get open(): boolean {
    return this.#socket.readyState === this.#socket.OPEN;
  }

  /** True when sent without waiting; otherwise a promise of whether the socket is still open. False once closed. */
  send(json: string): boolean | Promise<boolean> {
    if (!this.open) return false;
    if (this.#socket.bufferedAmount < HIGH_WATER_MARK) {
      this.#socket.send(json);
      return true;
    }
    return new Promise((resolve) => {
      this.#socket.send(json, (error) => resolve(!error && this.open));
    });
  }
}
