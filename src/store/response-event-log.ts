import { GatewayError } from '../errors/gateway-error.ts';

/** One event as kept: its sequence number, its type, its JSON (what SSE sends as `data:`). */
export interface LoggedEvent {
  sequence: number;
  type: string;
  json: string;
}

export interface EventLogLimits {
  /** Most events kept per response; the oldest go first. */
  maxEvents: number;
  /** Most bytes (of event JSON) kept per response; the oldest go first. */
  maxBytes: number;
  /** How long a response's events are kept after its last event. */
  ttlSeconds: number;
  /** Most bytes of event JSON kept in all, over every response (the memory log's; Redis bounds its own memory): the logs of finished responses go first, least recently written first. */
  maxTotalBytes?: number;
}

export interface FollowOptions {
  /** Replay events with a greater sequence number (-1: from the start). */
  after: number;
  /** Stops following (the reader went away). */
  signal: AbortSignal;
  /**
   * Asked when nothing arrived for a while: whether the response still
   * runs. A response that ended without its terminal event reaching the log
   * (its replica died before the reaper wrote one) must not keep a reader
   * forever.
   */
  stillRunning(): Promise<boolean>;
}

/**
 * The events of background responses, kept so a client can come back —
 * on any replica — and replay what it missed, then follow the live ones
 * (`GET /v1/responses/{id}?stream=true&starting_after=N`). Bounded in count
 * and bytes per response, expiring after a TTL.
 */
export interface ResponseEventLog {
  /** Appends events in order (sequence numbers increasing). */
  append(tenant: string, id: string, events: readonly LoggedEvent[]): Promise<void>;
  /** The last sequence number kept for the response; -1 when none is. */
  lastSequence(tenant: string, id: string): Promise<number>;
  /** The last event kept for the response; null when none is. */
  lastEvent(tenant: string, id: string): Promise<LoggedEvent | null>;
  /**
   * Throws `eventsExpired` when events after `after` were already dropped
   * (bounds) — a replay with a hole would corrupt the client's view of the
   * output. Checked before a stream starts, so it can still be a 400.
   */
  checkReplayable(tenant: string, id: string, after: number): Promise<void>;
  /**
   * Events after `after`, then live ones as they are appended, in batches,
   * until a terminal event, the signal, or `stillRunning()` saying no.
   */
  follow(tenant: string, id: string, options: FollowOptions): AsyncGenerator<LoggedEvent[]>;
  /** Forgets the response's events (it was deleted: what it said must not outlive it until the TTL). */
  delete(tenant: string, id: string): Promise<void>;
  close(): Promise<void>;
}

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

export function isTerminalEvent(type: string): boolean {
  return TERMINAL.has(type);
}

export function eventsExpired(id: string, firstKept: number | null): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'stream_events_expired',
    // Only a resumption can do better (from a later event); when none is kept, no parameter the client sent is at fault.
    param: firstKept === null ? null : 'starting_after',
    message:
      firstKept === null
        ? `The events of response '${id}' are no longer kept; retrieve the response without stream=true.`
        : `The events of response '${id}' before sequence number ${firstKept} are no longer kept; resume with starting_after >= ${firstKept - 1}, or retrieve the response without stream=true.`,
  });
}
