import type OpenAI from 'openai';
import { ResponsesWS, type ResponsesWSClientOptions } from 'openai/resources/responses/ws';

type AnyEvent = Record<string, any> & { type: string };

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

/**
 * The OpenAI SDK's own WebSocket client (`ResponsesWS`) on the gateway, with
 * what a test needs: every server frame in arrival order, split into turns
 * (each ends with a terminal event or an error frame), and the close.
 */
export class SocketClient {
  readonly ws: ResponsesWS;
  readonly frames: AnyEvent[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #taken = 0;
  #wake: (() => void) | null = null;

  /** `options` go to the SDK's socket (extra upgrade `headers`, say). */
  constructor(client: OpenAI, options?: ResponsesWSClientOptions) {
    this.ws = new ResponsesWS(client, options);
    this.ws.on('event', (event) => {
      this.frames.push(event as AnyEvent);
      this.#wake?.();
    });
    // Error frames also arrive as events (above); the SDK wants a listener so they are not unhandled rejections.
    this.ws.on('error', () => {});
    this.closed = new Promise((resolve) =>
      this.ws.on('close', (code, reason) => {
        resolve({ code, reason });
        this.#wake?.();
      }),
    );
  }

  send(body: Record<string, unknown>): void {
    this.ws.send({ type: 'response.create', ...body } as never);
  }

  /** Sends one `response.create` and returns its frames (events through the terminal one, or the error frame). */
  async create(body: Record<string, unknown>, timeoutMs = 10_000): Promise<AnyEvent[]> {
    this.send(body);
    return this.nextTurn(timeoutMs);
  }

  /** The frames of the next turn not yet taken. */
  async nextTurn(timeoutMs = 10_000): Promise<AnyEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.frames.findIndex((frame, index) => index >= this.#taken && (TERMINAL.has(frame.type) || frame.type === 'error'));
      if (end >= 0) {
        const turn = this.frames.slice(this.#taken, end + 1);
        this.#taken = end + 1;
        return turn;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no terminal frame within ${timeoutMs} ms; frames: ${this.frames.slice(this.#taken).map((frame) => frame.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.ws.close({ code: 1000, reason: 'done' });
  }
}

/** The response a turn's terminal event carries. */
export function finalOf(turn: AnyEvent[]): Record<string, any> {
  const last = turn.at(-1)!;
  if (!TERMINAL.has(last.type)) throw new Error(`turn ended with ${JSON.stringify(last)}`);
  return last.response;
}
