import type { Dispatcher } from 'undici';
import { errors } from 'undici';
import { MAX_UPSTREAM_BODY_BYTES, UpstreamAnswerTooLarge } from './upstream-answer-limits.ts';

/** An upstream answer read whole: its status, headers and body text. */
export interface WholeAnswer {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
}

/** Why a whole answer could not be read, and whether its status line had arrived by then. */
export class WholeAnswerFailure extends Error {
  /** The answer's status and headers when the failure came during its body; null when it came before (connecting, sending, waiting for headers). */
  readonly started: Omit<WholeAnswer, 'text'> | null;

  constructor(cause: Error, started: Omit<WholeAnswer, 'text'> | null) {
    super(cause.message, { cause });
    this.started = started;
  }
}

/**
 * Collects one upstream answer whole, straight from undici's dispatcher. An
 * answer the gateway parses as one JSON document needs no stream: `request()`
 * builds a Readable, a consume promise and their listeners for every call,
 * which under load was several microseconds a response. The text is decoded as
 * undici's `body.text()` decodes it (UTF-8, a byte order mark skipped).
 *
 * `signal` aborts the request as `request({ signal })` does: with the
 * signal's reason, the request's own abort error without one.
 */
export class WholeBodyHandler implements Dispatcher.DispatchHandler {
  readonly #signal: AbortSignal;
  readonly #resolve: (answer: WholeAnswer) => void;
  readonly #reject: (failure: WholeAnswerFailure) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #statusCode: number | null = null;
  #headers: Dispatcher.ResponseData['headers'] = {};
  #chunks: Buffer[] = [];
  #length = 0;
  #settled = false;
  readonly #onAbort = () => this.#controller?.abort(abortReason(this.#signal));

  constructor(signal: AbortSignal, resolve: (answer: WholeAnswer) => void, reject: (failure: WholeAnswerFailure) => void) {
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    if (!signal.aborted) signal.addEventListener('abort', this.#onAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#signal.aborted) {
      controller.abort(abortReason(this.#signal));
      return;
    }
    this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Dispatcher.ResponseData['headers']): void {
    // Informational answers (100 Continue) precede the real one.
    if (statusCode < 200) return;
    this.#statusCode = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#length > MAX_UPSTREAM_BODY_BYTES) {
      this.#chunks = [];
      controller.abort(new UpstreamAnswerTooLarge('an answer', MAX_UPSTREAM_BODY_BYTES, 'bytes'));
    }
  }

  onResponseEnd(): void {
    if (this.#settle()) this.#resolve({ statusCode: this.#statusCode ?? 0, headers: this.#headers, text: decode(this.#chunks, this.#length) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settle()) this.#reject(new WholeAnswerFailure(error, this.#statusCode === null ? null : { statusCode: this.#statusCode, headers: this.#headers }));
  }

  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#signal.removeEventListener('abort', this.#onAbort);
    return true;
  }
}

function abortReason(signal: AbortSignal): Error {
  return (signal.reason as Error | undefined) ?? new errors.RequestAbortedError();
}

function decode(chunks: Buffer[], length: number): string {
  if (length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}
