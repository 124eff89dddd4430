import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { ConnectionResponses } from '../../engine/connection-responses.ts';
import { loggingObserver, type LoopObserver } from '../../engine/loop-observer.ts';
import type { ResponseEngine, ResponseRun } from '../../engine/response-engine.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ResponseResource } from '../../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../../protocol/stream-events.ts';
import type { SecretRedactor } from '../../util/secret-redactor.ts';
import type { TraceContext } from '../../util/trace-context.ts';
import type { Tracing } from '../../observability/tracing.ts';
import { deliverEvents } from '../deliver-events.ts';
import { ResponseLog } from '../response-log.ts';
import type { Admission } from '../rate-limits/admission.ts';
import type { RateLimitGate } from '../rate-limits/rate-limit-gate.ts';
import { parseClientFrame } from './client-events.ts';
import { SocketWriter } from './socket-writer.ts';

export interface SocketSessionOptions {
  engine: ResponseEngine;
  secrets: SecretRedactor;
  /** How long one connection may stay open (OpenResponses: 60 minutes). */
  maxConnectionMs: number;
  /** How often the peer is pinged; one that has not answered the previous ping by the next is gone, unless it is still taking frames that wait for it. */
  pingIntervalMs: number;
  /** A peer that takes nothing of the frames waiting for it this long is cut (server.clientStallTimeoutMs, as for SSE; 0: no bound). */
  stallMs: number;
  /** `response.create` frames waiting behind the running response before the connection is refused as abusive. */
  maxQueuedFrames: number;
  /** Rate limits and quotas per API key: each `response.create` is a request. */
  rateLimits: RateLimitGate;
  /** Traces each response when tracing is on. */
  tracing?: Tracing | null;
}

export interface SocketPeer {
  tenant: string;
  /** The API key the upgrade carried, as its limits are kept. */
  apiKeyId: string;
  log: FastifyBaseLogger;
  /** The upgrade request's trace context: every response on the connection continues it. */
  trace?: TraceContext | null;
}

/** Close codes (RFC 6455 §7.4.1). */
const NORMAL_CLOSURE = 1000;
const GOING_AWAY = 1001;
const POLICY_VIOLATION = 1008;

type Frame = { data: RawData; isBinary: boolean };

/**
 * One WebSocket connection on `/v1/responses`: a transport over the same
 * event stream SSE clients get. Frames are served one at a time, in the
 * order they came; the connection keeps its latest response so the next
 * turn continues from it (with `store: false` too). The socket closing
 * cancels the running response, as a dropped HTTP connection does.
 */
export class ResponsesSocketSession {
  readonly #socket: WebSocket;
  readonly #peer: SocketPeer;
  readonly #options: SocketSessionOptions;
  readonly #writer: SocketWriter;
  readonly #connection = new ConnectionResponses();
  /** Aborted when the socket closes: stops the running response's model call and tools. */
  readonly #closed = new AbortController();
  readonly #queue: Frame[] = [];
  readonly #timers: NodeJS.Timeout[] = [];
  #busy = false;
  #awaitingPong = false;
  #waitedAtLastPing = false;
  #limitReached = false;
  #limitErrorSent = false;
  #draining = false;
  /** Resolves once the socket has closed. */
  readonly finished: Promise<void>;

  constructor(socket: WebSocket, peer: SocketPeer, options: SocketSessionOptions) {
    this.#socket = socket;
    this.#peer = peer;
    this.#options = options;
    this.#writer = new SocketWriter(socket);
    this.finished = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('message', (data, isBinary) => this.#enqueue({ data, isBinary }));
    socket.on('pong', () => (this.#awaitingPong = false));
    socket.once('close', (code) => this.#onClose(code));
    // ws closes the socket itself after an error (a frame over maxPayload, a protocol violation); the close handler does the rest.
    socket.on('error', (error) => peer.log.info({ err: error }, 'websocket error'));
    this.#timers.push(setInterval(() => this.#ping(), options.pingIntervalMs).unref());
    this.#timers.push(setTimeout(() => this.#reachLimit(), options.maxConnectionMs).unref());
  }

  /** Stops taking new responses; the socket closes once the running one has ended (the engine ends it at the grace's end). */
  drain(): void {
    this.#draining = true;
    if (!this.#busy) void this.#pump();
  }

  /** Ends the connection at once (the running response is cancelled). */
  terminate(): void {
    this.#socket.terminate();
  }

  #enqueue(frame: Frame): void {
    if (this.#queue.length >= this.#options.maxQueuedFrames) {
      const error = new GatewayError({ status: 429, type: 'rate_limit_error', code: 'websocket_queue_full', message: `More than ${this.#options.maxQueuedFrames} response.create events are waiting on this connection; responses on one WebSocket run one at a time — open more connections to run them in parallel.` });
      // The connection closes: the refused frame and those still waiting each get the error under their own stream_id, so no client lane waits on a reply that cannot come.
      const refused = [frame, ...this.#queue.splice(0)];
      void (async () => {
        for (const each of refused) await this.#sendError(error, parseClientFrame(each.data, each.isBinary).streamId);
      })().then(() => this.#socket.close(POLICY_VIOLATION, 'websocket_queue_full'));
      return;
    }
    this.#queue.push(frame);
    void this.#pump();
  }

  /** Serves queued frames one after another; only one pump runs at a time. */
  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.#queue.length > 0 && this.#writer.open) {
        const frame = this.#queue.shift()!;
        if (!this.#limitReached && !this.#draining) {
          await this.#serve(frame);
          continue;
        }
        // A frame refused unread still gets its stream_id back: a client tracking its requests by it would wait forever.
        const { streamId } = parseClientFrame(frame.data, frame.isBinary);
        if (this.#limitReached) await this.#sendLimitError(streamId);
        else await this.#sendError(shuttingDown(), streamId);
      }
    } catch (error) {
      this.#peer.log.error({ err: error }, 'websocket session failed');
      this.#socket.terminate();
    } finally {
      this.#busy = false;
    }
    if (this.#limitReached) await this.#closeAtLimit();
    else if (this.#draining) this.#socket.close(GOING_AWAY, 'server shutting down');
  }

  async #serve(frame: Frame): Promise<void> {
    const parsed = parseClientFrame(frame.data, frame.isBinary);
    if (!parsed.ok) {
      this.#failedContinuation(parsed.previousResponseId);
      await this.#sendError(parsed.error, parsed.streamId);
      return;
    }
    const { request, streamId } = parsed;
    const log = this.#peer.log as FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };
    const summary = log.isLevelEnabled?.('info') ? new ResponseLog() : null;
    let admission: Admission | null = null;
    let run: ResponseRun;
    try {
      admission = await this.#options.rateLimits.admit(this.#peer.apiKeyId, { concurrent: true });
      const observers: LoopObserver[] = [admission.observer, ...(summary ? [summary] : []), ...(log.isLevelEnabled?.('debug') ? [loggingObserver(log)] : [])];
      if (this.#options.tracing) observers.push(this.#options.tracing.observer(this.#peer.trace ?? null));
      run = await this.#options.engine.createResponse(request, { tenant: this.#peer.tenant, signal: this.#closed.signal, observers, connection: this.#connection, admit: admission.reserveTokens });
    } catch (error) {
      await admission?.done();
      this.#failedContinuation(parsed.previousResponseId);
      if (this.#closed.signal.aborted) return;
      const refusal = asGatewayError(error);
      this.#logRefusal(refusal, error, request.model ?? null);
      await this.#sendError(refusal, streamId);
      return;
    }
    const final = await this.#stream(run.events, streamId, summary);
    // Settled before the next frame is served: its limits see this response's tokens and slot.
    await admission.done();
    if (final?.status === 'failed') this.#failedContinuation(parsed.previousResponseId);
    if (final && summary) summary.write(log, final, { tenant: this.#peer.tenant, provider: run.provider, upstreamModel: run.upstreamModel, stream: true, omittedTools: run.omittedTools, deployment: run.deployment, transport: 'websocket' });
  }

  /** Sends each event as one text frame, the same objects SSE carries; no `[DONE]`: the terminal event ends a response. */
  async #stream(batches: AsyncGenerator<ResponseStreamEvent[]>, streamId: string | null, summary: ResponseLog | null): Promise<ResponseResource | null> {
    const { final, delivered } = await deliverEvents(batches, (event) => this.#writer.send(JSON.stringify(streamId === null ? event : { ...event, stream_id: streamId })), () => summary?.firstByte());
    if (!delivered) this.#peer.log.info({ response_id: final?.id }, 'websocket closed during the response');
    return final;
  }

  /** A continuation that fails evicts the response it named: it is not continued from again on this connection. */
  #failedContinuation(previousResponseId: string | null): void {
    if (previousResponseId !== null) this.#connection.evict(previousResponseId);
  }

  /**
   * `{type: "error", status, error: {type, code, message, param}}` (OpenResponses' `WebSocketErrorEvent`), with the
   * headers an HTTP answer would carry (`retry-after`, `x-should-retry`) as `headers`, where Codex's socket client reads them.
   */
  async #sendError(error: GatewayError, streamId: string | null): Promise<void> {
    const body = error.toBody();
    this.#options.secrets.redactFields(body.error);
    // The socket's error event requires a code, where HTTP's envelope takes null (an upstream's refusal often has none): its type says what it is.
    body.error.code ??= body.error.type;
    const headers = Object.keys(error.headers).length > 0 ? { headers: error.headers } : null;
    const frame = { type: 'error', status: error.status, error: body.error, ...headers, ...(streamId !== null && { stream_id: streamId }) };
    const written = this.#writer.send(JSON.stringify(frame));
    if (written !== true) await written;
  }

  #logRefusal(refusal: GatewayError, error: unknown, model: string | null): void {
    const fields = { tenant: this.#peer.tenant, model, transport: 'websocket', status: refusal.status, code: refusal.code, param: refusal.param };
    if (!(error instanceof GatewayError)) this.#peer.log.error({ ...fields, err: error }, 'response failed to start');
    else if (refusal.status >= 500) this.#peer.log.warn(fields, refusal.message);
    else this.#peer.log.info(fields, refusal.message);
  }

  #ping(): void {
    const stalledMs = this.#writer.stalledMs();
    const waiting = this.#writer.waiting;
    // Frames waited for the peer at the last look: its pong comes right behind them, so it gets one more interval.
    const justCaughtUp = this.#waitedAtLastPing && !waiting;
    this.#waitedAtLastPing = waiting;
    if (this.#awaitingPong) {
      // The ping, and so the pong, wait behind frames the peer is still taking (a large frame on a slow link): late, not missing.
      // A peer that takes nothing is cut at the stall bound, as an SSE client is.
      if (justCaughtUp || (waiting && (this.#options.stallMs === 0 || stalledMs < this.#options.stallMs))) return;
      this.#peer.log.info(waiting ? 'websocket peer stopped taking frames' : 'websocket peer stopped answering pings');
      this.#socket.terminate();
      return;
    }
    this.#awaitingPong = true;
    this.#socket.ping();
  }

  #reachLimit(): void {
    this.#limitReached = true;
    // A running response finishes first; the pump closes the connection after it.
    if (!this.#busy) void this.#closeAtLimit();
  }

  async #sendLimitError(streamId: string | null = null): Promise<void> {
    this.#limitErrorSent = true;
    const minutes = Math.round(this.#options.maxConnectionMs / 60_000);
    const limit = minutes >= 1 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.round(this.#options.maxConnectionMs / 1000)} seconds`;
    await this.#sendError(new GatewayError({ status: 400, type: 'invalid_request_error', code: 'websocket_connection_limit_reached', message: `This WebSocket connection reached its ${limit} limit; open a new connection and continue with previous_response_id (stored responses) or the full input.` }), streamId);
  }

  async #closeAtLimit(): Promise<void> {
    if (!this.#writer.open) return;
    if (!this.#limitErrorSent) await this.#sendLimitError();
    this.#socket.close(NORMAL_CLOSURE, 'websocket_connection_limit_reached');
  }

  #onClose(code: number): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#queue.length = 0;
    this.#closed.abort(new Error('client disconnected'));
    this.#peer.log.debug({ code }, 'websocket closed');
  }
}

function shuttingDown(): GatewayError {
  return new GatewayError({ status: 503, type: 'server_error', code: 'server_shutting_down', message: 'This gateway instance is shutting down; open a new connection and retry.' });
}

/** What an unexpected failure tells the client: nothing of the bug (it is logged). */
function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError({ status: 500, type: 'server_error', code: 'internal_error', message: 'The gateway failed to process the request.', cause: error });
}
