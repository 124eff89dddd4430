import { monotonicNow } from '../../util/monotonic-clock.ts';
import { describeFailure, type McpServerTarget, type McpSessionPool, type McpTool } from './mcp-session-pool.ts';

/** What the catalog logs: pino's shape, so the executors stay free of Fastify. */
export interface CatalogLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface OperatorToolCatalogOptions {
  pool: McpSessionPool;
  log: CatalogLogger;
  /** How long a listing is served before it is refreshed (in the background). */
  listTtlMs: number;
  /**
   * Longest a request waits for a server's first listing, counted from when
   * that listing started: once a server has been silent that long, requests
   * go on without it instead of each waiting again.
   */
  listWaitMs: number;
  /** First back-off after a failure; it doubles with each failure in a row, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
}

/** Least time between two listings a server's change notices prompt. */
const CHANGE_RELIST_MS = 1_000;

/** One operator server as `/readyz` reports it. */
export interface OperatorServerStatus {
  name: string;
  origin: string;
  /** `listing`: not answered yet; `ready`: tools offered; `unavailable`: skipped until `retry_in_ms`. */
  state: 'listing' | 'ready' | 'unavailable';
  tools: number;
  error?: string;
  retry_in_ms?: number;
}

interface Entry {
  name: string;
  target: McpServerTarget;
  /** The last listing that succeeded. */
  tools: McpTool[] | null;
  toolsVersion: number;
  freshUntil: number;
  listing: Promise<void> | null;
  listingStartedAt: number;
  /** When the server's change notices last had it listed (they do so at most once a second). */
  changeListedAt: number;
  failures: number;
  retryAt: number;
  lastError: string | null;
  timer: NodeJS.Timeout | null;
}

/**
 * The tools of the operator's MCP servers, kept warm in the background so
 * that no request waits on a server: each is listed at start, refreshed when
 * its listing ages (the old one is served meanwhile), and a server that
 * fails is skipped — a circuit breaker with exponential back-off, retried in
 * the background — with one warn line when it goes away and one info line
 * when it is back.
 */
export class OperatorToolCatalog {
  readonly #options: OperatorToolCatalogOptions;
  readonly #entries: Entry[];
  #closed = false;

  constructor(servers: readonly { name: string; target: McpServerTarget }[], options: OperatorToolCatalogOptions) {
    this.#options = options;
    this.#entries = servers.map(({ name, target }) => ({
      name,
      target,
      tools: null,
      toolsVersion: 0,
      freshUntil: 0,
      listing: null,
      listingStartedAt: 0,
      changeListedAt: 0,
      failures: 0,
      retryAt: 0,
      lastError: null,
      timer: null,
    }));
  }

  /** Starts listing every server in the background. */
  start(): void {
    for (const entry of this.#entries) this.#refresh(entry);
  }

  /**
   * Each server's tools as they can be offered now. Waits only for a server
   * whose first listing is still within `listWaitMs` of its start; a server
   * that failed is skipped at once.
   */
  async current(): Promise<{ name: string; target: McpServerTarget; tools: McpTool[] }[]> {
    return Promise.all(this.#entries.map(async (entry) => ({ name: entry.name, target: entry.target, tools: await this.#toolsOf(entry) })));
  }

  /**
   * A call to this server failed as if it were gone (its connection broke, it
   * did not answer): it is listed again now rather than at its next refresh,
   * so that a server that died is left out of requests at once.
   */
  recheck(target: McpServerTarget): void {
    const entry = this.#entries.find((candidate) => candidate.target === target);
    if (!entry || entry.failures > 0) return;
    // Listed afresh, on a new session: the calls' sessions are the tenants' own, and the listing's, its connection likely broken with theirs,
    // would answer from its cache, or fail as closed rather than say why the server cannot be reached (an HTTP+SSE one keeps its session while it retries).
    this.#options.pool.renew(entry.target, null);
    void this.#refresh(entry, 'lost');
  }

  status(): OperatorServerStatus[] {
    const now = monotonicNow();
    return this.#entries.map((entry) => {
      const base = { name: entry.name, origin: new URL(entry.target.url).origin, tools: entry.tools?.length ?? 0 };
      if (entry.failures > 0) return { ...base, state: 'unavailable', tools: 0, error: entry.lastError ?? 'unknown error', retry_in_ms: Math.max(0, entry.retryAt - now) };
      return { ...base, state: entry.tools ? 'ready' : 'listing' };
    });
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#entries) if (entry.timer) clearTimeout(entry.timer);
  }

  async #toolsOf(entry: Entry): Promise<McpTool[]> {
    if (entry.failures > 0) return [];
    const now = monotonicNow();
    // Told of a change (on any session of the server, a tenant's call's too): listed afresh, not from the listing session's cache —
    // at most once a second, for a server that says so on every call would otherwise be listed on every request.
    const changed = entry.tools !== null && this.#options.pool.session(entry.target, null).toolsVersion !== entry.toolsVersion && now - entry.changeListedAt >= CHANGE_RELIST_MS;
    if (entry.tools && (entry.freshUntil <= now || changed)) this.#refresh(entry, changed ? 'changed' : 'due');
    if (entry.tools) return entry.tools;
    const listing = entry.listing ?? this.#refresh(entry);
    const waitMs = entry.listingStartedAt + this.#options.listWaitMs - now;
    if (waitMs <= 0) return [];
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([listing, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    return entry.failures === 0 ? (entry.tools ?? []) : [];
  }

  /**
   * Lists the server unless a listing is already under way; never rejects.
   * `why`: its listing is due; it said its tools changed; a call found it
   * gone (the last two ask the server, not the session's cache).
   */
  #refresh(entry: Entry, why: 'due' | 'changed' | 'lost' = 'due'): Promise<void> {
    if (entry.listing) return entry.listing;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    entry.listingStartedAt = monotonicNow();
    if (why === 'changed') entry.changeListedAt = entry.listingStartedAt;
    const session = this.#options.pool.session(entry.target, null);
    const version = session.toolsVersion;
    entry.listing = session.tools({ fresh: why !== 'due' }).then(
      (tools) => this.#listed(entry, tools, version),
      (error: unknown) => (why === 'changed' && entry.tools ? this.#changeNotListed(entry, error) : this.#failed(entry, error)),
    );
    return entry.listing;
  }

  #listed(entry: Entry, tools: McpTool[], version: number): void {
    const recovered = entry.failures > 0;
    Object.assign(entry, { tools, toolsVersion: version, freshUntil: monotonicNow() + this.#options.listTtlMs, listing: null, failures: 0, retryAt: 0, lastError: null });
    if (recovered) this.#options.log.info({ mcp_server: entry.name, origin: new URL(entry.target.url).origin, tools: tools.length }, 'MCP server is back; its tools are offered again');
    this.#schedule(entry, this.#options.listTtlMs);
  }

  /**
   * A server that said its tools changed and then failed to list them (busy,
   * rate-limited) answered its calls all the same: its earlier tools stay
   * offered, and the change is asked for again by a later request (at most
   * once a second). One that is gone is found by its calls (`recheck`).
   */
  #changeNotListed(entry: Entry, error: unknown): void {
    entry.listing = null;
    this.#options.log.debug({ mcp_server: entry.name, origin: new URL(entry.target.url).origin, error: describeFailure(error) }, 'MCP server said its tools changed but did not list them; its earlier tools stay offered');
    this.#schedule(entry, Math.max(0, entry.freshUntil - monotonicNow()));
  }

  #failed(entry: Entry, error: unknown): void {
    entry.listing = null;
    entry.failures++;
    entry.lastError = describeFailure(error);
    const backoffMs = Math.min(this.#options.retryBaseMs * 2 ** (entry.failures - 1), this.#options.retryMaxMs);
    entry.retryAt = monotonicNow() + backoffMs;
    const fields = { mcp_server: entry.name, origin: new URL(entry.target.url).origin, error: entry.lastError, failures: entry.failures, retry_in_ms: backoffMs };
    // One warn line when a server goes away; its further failed retries are detail.
    if (entry.failures === 1) this.#options.log.warn(fields, 'MCP server unavailable; its tools are not offered until it answers again');
    else this.#options.log.debug(fields, 'MCP server still unavailable');
    this.#schedule(entry, backoffMs);
  }

  #schedule(entry: Entry, delayMs: number): void {
    if (this.#closed) return;
    entry.timer = setTimeout(() => void this.#refresh(entry), delayMs);
    entry.timer.unref();
  }
}
