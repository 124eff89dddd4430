/** What the store logs with: pino's shape, so the store stays free of Fastify. */
export interface StoreLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** How often a connection that stays down is reported again (with the count of failures since). */
const REPEAT_MS = 30_000;

/**
 * Turns a Redis client's connection events into few, useful log lines: the
 * first failure of an outage at once (authentication failures and refusals
 * named as such), then at most one line per 30 s with the number of failed
 * attempts, and one line when the connection is back. A Redis that is down
 * for an hour writes about a hundred lines, not one per retry.
 */
export class ConnectionEventsLog {
  readonly #log: StoreLogger;
  readonly #fields: Record<string, unknown>;
  #down = false;
  #failuresSinceReport = 0;
  #lastReportAt = 0;
  #ever = false;
  #closing = false;

  constructor(log: StoreLogger, fields: Record<string, unknown>) {
    this.#log = log;
    this.#fields = fields;
  }

  /** The connection is ready (first time, or again after an outage). */
  ready(): void {
    if (this.#down) this.#log.info({ ...this.#fields }, 'Redis connection is back');
    else if (!this.#ever) this.#log.info({ ...this.#fields }, 'Redis connected');
    this.#ever = true;
    this.#down = false;
    this.#failuresSinceReport = 0;
  }

  /** The gateway is closing the connection itself: what follows is not an outage. */
  closing(): void {
    this.#closing = true;
  }

  /** A connection that was up went away. */
  lost(): void {
    if (this.#down || !this.#ever || this.#closing) return;
    this.#down = true;
    this.#lastReportAt = performance.now();
    this.#log.warn({ ...this.#fields }, 'Redis connection lost; reconnecting (requests that need the store get 503 meanwhile)');
  }

  /** An error from the client: a failed connection attempt or a refusal. */
  failed(error: Error): void {
    if (this.#closing) return;
    const reason = connectionFailureReason(error);
    const now = performance.now();
    if (!this.#down) {
      this.#down = true;
      this.#lastReportAt = now;
      this.#failuresSinceReport = 0;
      this.#log.error({ ...this.#fields, reason, error: error.message }, `Redis unavailable: ${describe(reason)}`);
      return;
    }
    this.#failuresSinceReport++;
    if (now - this.#lastReportAt < REPEAT_MS) return;
    this.#log.error({ ...this.#fields, reason, error: error.message, failed_attempts: this.#failuresSinceReport }, `Redis still unavailable: ${describe(reason)}`);
    this.#lastReportAt = now;
    this.#failuresSinceReport = 0;
  }
}

/** Why a Redis connection failed, in words an operator (and `/readyz`) can use. */
export type ConnectionFailureReason = 'authentication_failed' | 'permission_denied' | 'read_only_replica' | 'connection_refused' | 'timeout' | 'host_not_found' | 'error';

export function connectionFailureReason(error: Error): ConnectionFailureReason {
  const code = (error as { code?: unknown }).code;
  // An ACL user without a command or key the store needs (managed Redis hands out such users): no retry mends it.
  // Inside a script Redis says it otherwise: 7.0 "The user executing the script can't run this command…", 7.2 "ACL failure in script".
  if (/^NOPERM\b|user executing the script can't|ACL failure in script/.test(error.message)) return 'permission_denied';
  // A write refused by a replica that a connection made afresh still reached: the URL names a replica, not the primary.
  if (/^READONLY\b/.test(error.message)) return 'read_only_replica';
  if (/WRONGPASS|NOAUTH|invalid password|AUTH/i.test(error.message)) return 'authentication_failed';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ETIMEDOUT' || /timed? ?out/i.test(error.message)) return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host_not_found';
  return 'error';
}

function describe(reason: ConnectionFailureReason): string {
  switch (reason) {
    case 'authentication_failed':
      return 'authentication failed (check the password or user in REDIS_URL)';
    case 'permission_denied':
      return "the user may not run a command the store needs (its ACL must allow +@read +@write +@scripting +@pubsub on the gateway's keys and channels, and on a Cluster +cluster|info +cluster|slots)";
    case 'read_only_replica':
      return 'the server is a read-only replica (REDIS_URL must name the primary, or an endpoint that follows failovers)';
    case 'connection_refused':
      return 'connection refused';
    case 'timeout':
      return 'no answer in time';
    case 'host_not_found':
      return 'host not found';
    case 'error':
      return 'connection error';
  }
}
