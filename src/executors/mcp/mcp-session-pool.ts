import { STATUS_CODES } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { checkStructured, listTools, truncate, type McpTool, type ToolListing } from './list-tools.ts';
import { headerSecrets, SecretRedactor, urlSecrets } from '../../util/secret-redactor.ts';
import type { TraceContext } from '../../util/trace-context.ts';
import type { ToolResult } from '../tool-executor.ts';
import { cancellableCallFetch, type FetchLike } from './cancellable-calls.ts';
import { egressRefusalIn } from './egress-policy.ts';
import { toolResultOutput } from './tool-result-output.ts';
import { withinTime } from '../../util/within-time.ts';

/** Where an MCP server is and how to reach it. */
export interface McpServerTarget {
  url: string;
  /** Sent to this server only (never the client's own Authorization). */
  headers: Readonly<Record<string, string>>;
  /** Request-supplied servers go through the egress policy; operator-configured ones do not. */
  untrusted: boolean;
}

/** A tool as an MCP server lists it (descriptions already size-limited). */
export type { McpTool } from './list-tools.ts';

export interface McpSessionPoolOptions {
  /** How long a `tools/list` answer is reused (a `tools/list_changed` notification drops it sooner). */
  listTtlMs: number;
  /** The fetch untrusted servers are reached through (the egress policy's). */
  untrustedFetch: FetchLike;
  /** Largest tool output handed to the model, in characters. */
  maxOutputChars: number;
  /**
   * Most sessions kept open. Request-named servers (and per-user headers)
   * would otherwise let clients make the gateway hold any number of
   * connections; the least recently used session is closed first.
   */
  maxSessions: number;
  /** Longest connecting (and the MCP handshake) may take, even against a server that accepts TCP and never answers. */
  connectTimeoutMs?: number;
  /** Longest one `tools/list` page may take. */
  listTimeoutMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long ending a session on the server may take: a server that does not answer its DELETE must not hold a shutdown. */
const END_SESSION_TIMEOUT_MS = 1_000;
const DEFAULT_LIST_TIMEOUT_MS = 10_000;

/** A call's result, and whether the server could not be reached or stopped answering (a transport failure, not its own error). */
export type McpCallResult = ToolResult & { serverLost: boolean };

/** What the SDK reports when a call's event stream breaks (the server went away mid-call), or its reconnection gives up. */
const LOST_STREAM = /^(SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect)/;
/** The HTTP+SSE transport's answer to a message for a session the server no longer knows (it restarted). */
const SSE_SESSION_GONE = /^Error POSTing to endpoint \(HTTP 404\)/;
/** How long a server whose stream broke has to answer a ping before its session is taken for lost. */
const LOST_STREAM_PROBE_MS = 3_000;

/** A failure as one line: a fetch's own message ("fetch failed") hides the cause that says what happened (ECONNREFUSED). */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // The SDK's message leaves the status out ("Error POSTing to endpoint: " and the body, often empty): a 401 and a proxy's 502 read alike.
  if (error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code >= 100) return `HTTP ${error.code}${STATUS_CODES[error.code] ? ` ${STATUS_CODES[error.code]}` : ''}: ${error.message}`;
  const cause = (error as { cause?: unknown }).cause;
  const code = cause && typeof cause === 'object' ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/** A connect or listing that ran out of its time. */
export class McpTimeoutError extends Error {
  override readonly name = 'McpTimeoutError';
}


/**
 * One MCP client session per server (URL + headers) and tenant, connected on
 * first use and reused by every request of that tenant after — no reconnect
 * per call. A session is where an MCP server keeps its per-client state (a
 * browser's page, a notebook, what a tool was told earlier), so no tenant's
 * calls ever go through another's. Streamable HTTP first, the older HTTP+SSE
 * transport when that fails. A session whose transport closes is dropped and
 * reconnects on the next use.
 */
export class McpSessionPool {
  readonly #options: McpSessionPoolOptions;
  readonly #sessions = new Map<string, McpSession>();

  /**
   * How often each operator server said its tools changed, on any session of
   * it (any tenant's): some servers say so only on the stream of the call that
   * changed them, and the operator's catalog, which lists on a session of its
   * own, must hear it. By server (URL and headers): the operator's servers are
   * the configuration's, so this stays as small; a request-named server's
   * count, which nobody reads, is its session's own.
   */
  readonly #changes = new Map<string, ToolChanges>();

  constructor(options: McpSessionPoolOptions) {
    this.#options = options;
  }

  /** `tenant`: whose calls the session carries; null for the operator's own listings of its servers (no tenant's state is in a listing). */
  session(target: McpServerTarget, tenant: string | null): McpSession {
    const server = serverKey(target);
    const key = JSON.stringify([server, tenant]);
    let session = this.#sessions.get(key);
    if (session) {
      this.#sessions.delete(key);
    } else {
      session = new McpSession(target, this.#options, this.#changesOf(target, server), () => {
        if (this.#sessions.get(key) === session) this.#sessions.delete(key);
      });
    }
    this.#sessions.set(key, session);
    while (this.#sessions.size > this.#options.maxSessions) {
      const [oldestKey, oldest] = this.#sessions.entries().next().value as [string, McpSession];
      this.#sessions.delete(oldestKey);
      oldest.retire();
    }
    return session;
  }

  #changesOf(target: McpServerTarget, server: string): ToolChanges {
    if (target.untrusted) return { version: 0 };
    let changes = this.#changes.get(server);
    if (!changes) this.#changes.set(server, (changes = { version: 0 }));
    return changes;
  }

  /** Leaves the pooled session of `target` for `tenant`, if any, to close once idle: the next use connects anew (a call of another session found the server gone). */
  renew(target: McpServerTarget, tenant: string | null): void {
    const key = JSON.stringify([serverKey(target), tenant]);
    const session = this.#sessions.get(key);
    if (!session) return;
    this.#sessions.delete(key);
    session.retire();
  }

  get size(): number {
    return this.#sessions.size;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#sessions.values()].map((session) => session.close()));
    this.#sessions.clear();
  }
}

function serverKey(target: McpServerTarget): string {
  return JSON.stringify([target.url, Object.entries(target.headers).sort(), target.untrusted]);
}

/** How often a server said its tools changed (`tools/list_changed`), on any of its sessions. */
interface ToolChanges {
  version: number;
}

export class McpSession {
  readonly #target: McpServerTarget;
  readonly #options: McpSessionPoolOptions;
  readonly #onGone: () => void;
  /** The server's own credentials, should it echo them (in an error or a result): they stop here. */
  readonly #secrets: SecretRedactor;
  #client: Promise<Client> | null = null;
  #live: Client | null = null;
  /**
   * The session's own listing: a server may list differently on each session
   * (tools it enables for one client), so one tenant's listing is never
   * another's.
   */
  #tools: { value: Promise<McpTool[]>; expiresAt: number } | null = null;
  /** The output-schema checks of the session's last listing, every page's (list-tools.ts). */
  #outputChecks: ToolListing['outputChecks'] = new Map();
  readonly #changes: ToolChanges;
  /** Listings and calls under way: a session pushed out of the pool closes once they are done, not under them. */
  #busy = 0;
  #retired = false;

  constructor(target: McpServerTarget, options: McpSessionPoolOptions, changes: ToolChanges, onGone: () => void) {
    this.#target = target;
    this.#options = options;
    this.#changes = changes;
    this.#onGone = onGone;
    // Its headers' values and its URL's credentials: a fetch error may quote the URL.
    const secrets = [...headerSecrets(target.headers), ...urlSecrets(target.url)];
    this.#secrets = secrets.length > 0 ? new SecretRedactor(secrets) : SecretRedactor.none;
  }

  /** Grows each time the server says its tools changed (`tools/list_changed`), so holders of a listing know it is stale. */
  get toolsVersion(): number {
    return this.#changes.version;
  }

  /** The server's tools: cached, shared by concurrent callers, refreshed on `tools/list_changed`; `fresh` asks the server again (is it still there?). */
  tools({ fresh = false }: { fresh?: boolean } = {}): Promise<McpTool[]> {
    const cached = this.#tools;
    if (cached && cached.expiresAt > performance.now() && !fresh) return cached.value;
    const value = this.#withClient(async (client) => {
      const listing = await listTools(client, this.#options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS);
      this.#outputChecks = listing.outputChecks;
      return listing.tools;
    }).catch((error: unknown) => {
      throw this.#secrets.redactError(error);
    });
    this.#tools = { value, expiresAt: performance.now() + this.#options.listTtlMs };
    value.catch(() => {
      if (this.#tools?.value === value) this.#tools = null;
    });
    return value;
  }

  /**
   * Calls a tool; MCP errors and transport failures are error results, cancellation reaches the server.
   * A trace context goes in `params._meta` (`traceparent`, `tracestate`), where OpenTelemetry's MCP
   * conventions put it: it then reaches the server whatever the transport (an HTTP+SSE server answers on
   * one shared stream). With `attachImages`, the images a result holds come back as images, beside its text.
   * `outputCheck`: the output schema of the listing the tool was offered from (the operator's catalog lists
   * on a session of its own); else this session's own listing's.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    { trace, attachImages = false, outputCheck }: { trace?: TraceContext | undefined; attachImages?: boolean; outputCheck?: McpTool['outputCheck'] } = {},
  ): Promise<McpCallResult> {
    try {
      const result = (await this.#withClient((client) => client.callTool({ name, arguments: args, ...(trace && { _meta: { ...trace } }) }, undefined, { signal, timeout: timeoutMs }))) as CallToolResult;
      checkStructured(name, result, outputCheck ?? this.#outputChecks.get(name));
      const { text, images } = toolResultOutput(result, attachImages);
      // An error with nothing to say would reach the model as an empty, successful-looking output.
      const said = result.isError === true && text.trim() === '' ? 'The tool reported an error without a message.' : text;
      const output = this.#secrets.redact(truncate(said, this.#options.maxOutputChars));
      return { output, isError: result.isError === true, ...(images.length > 0 && { images }), serverLost: false };
    } catch (error) {
      const message = this.#secrets.redact(describeFailure(error));
      // The server answered with an error (bad arguments, an unknown tool) unless the error is the transport's.
      const serverLost = !signal.aborted && (!(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout);
      // The call went out and its connection closed before the answer: it may have run, as a call cut off by its timeout may.
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && !signal.aborted) {
        return { output: JSON.stringify({ error: `MCP call '${name}' failed: ${message}. The connection to the server was lost before it answered: whether the call took effect is unknown.` }), isError: true, unfinished: true, serverLost };
      }
      return { output: JSON.stringify({ error: `MCP call '${name}' failed: ${message}` }), isError: true, serverLost };
    }
  }

  /** Out of the pool: closes now when idle, else when its last listing or call is done (a call cut off would leave the server running it, its outcome unknown). */
  retire(): void {
    this.#retired = true;
    if (this.#busy === 0) void this.close().catch(() => {});
  }

  /** Ends the session on the server (Streamable HTTP's DELETE, which the specification asks of a client done with one), then closes it. */
  async close(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    const open = client ? await client.catch(() => null) : null;
    if (!open) return;
    const transport = open.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) await endedWithin(transport.terminateSession(), END_SESSION_TIMEOUT_MS);
    await open.close();
  }

  async #using<T>(work: () => Promise<T>): Promise<T> {
    this.#busy++;
    try {
      return await work();
    } finally {
      if (--this.#busy === 0 && this.#retired) void this.close().catch(() => {});
    }
  }

  /**
   * `work` on the session's client. A server that ended the session (it
   * expired it, or restarted without breaking a stream) answers 404 to its
   * id: as the MCP specification asks, a new session is opened and `work`
   * tried once more on it — a 404 means the server never took the request.
   */
  #withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
    return this.#using(async () => {
      const client = await this.#connect();
      try {
        return await work(client);
      } catch (error) {
        if (!sessionGone(error)) throw error;
        this.#forget(client);
        return work(await this.#connect());
      }
    });
  }

  /** Drops a client the server no longer knows, keeping this session (and its place in the pool) for the next one. */
  #forget(client: Client): void {
    if (this.#live === client) {
      this.#live = null;
      this.#client = null;
      this.#tools = null;
    }
    void client.close().catch(() => {});
  }

  #connect(): Promise<Client> {
    this.#client ??= this.#open().catch((error: unknown) => {
      this.#client = null;
      throw error;
    });
    return this.#client;
  }

  /**
   * Connects within the connect timeout, whatever the server does: a server
   * that accepts TCP and never answers would otherwise hold the handshake
   * (and the HTTP+SSE fallback's event stream) open for minutes.
   */
  async #open(): Promise<Client> {
    const url = new URL(this.#target.url);
    const requestInit: RequestInit = { headers: { ...this.#target.headers } };
    const fetch = this.#target.untrusted ? this.#options.untrustedFetch : undefined;
    const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const deadline = performance.now() + timeoutMs;
    const client = this.#newClient();
    try {
      // Each call's own exchange ends when the call is cancelled (cancellable-calls.ts): the SDK alone leaves it open for the session's life.
      const transport = new StreamableHTTPClientTransport(url, { requestInit, fetch: cancellableCallFetch(fetch ?? globalThis.fetch) });
      await connectedWithin(client.connect(transport), timeoutMs, () => client.close());
      return (this.#live = client);
    } catch (streamableError) {
      // A server that did not answer at all will not answer the older transport either.
      if (streamableError instanceof McpTimeoutError) throw streamableError;
      // Servers from before Streamable HTTP speak HTTP+SSE on the same URL.
      const legacy = this.#newClient();
      const remainingMs = Math.max(1, deadline - performance.now());
      try {
        await connectedWithin(legacy.connect(new SSEClientTransport(url, { requestInit, ...(fetch && { fetch, eventSourceInit: { fetch } }) })), remainingMs, () => legacy.close());
        return (this.#live = legacy);
      } catch (legacyError) {
        // The SDK leaves a failed SSE transport's EventSource reconnecting every few seconds, for good: closed here.
        await legacy.close().catch(() => {});
        // The egress policy's refusal of the older transport's requests (a redirect, its endpoint) is the one to tell.
        throw legacyError instanceof McpTimeoutError || egressRefusalIn(legacyError) ? legacyError : streamableError;
      }
    }
  }

  #newClient(): Client {
    const client = new Client({ name: 'loopgate', version: '0.1.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#tools = null;
      this.#changes.version++;
    });
    client.onclose = () => {
      if (this.#live !== client) return;
      this.#live = null;
      this.#client = null;
      this.#tools = null;
      this.#onGone();
    };
    // A server that dies mid-call breaks the call's event stream; the SDK says so here and then waits (for a
    // reconnection that cannot answer, or for nothing) until the call's own timeout. Whether the server is gone
    // or only that one stream was cut (a proxy's idle timeout) a ping tells: gone, the session is closed, which
    // fails its calls at once ("Connection closed") and the next use connects anew; still there, the session and
    // every other call on it go on, and the cut call ends at its timeout.
    let probing = false;
    client.onerror = (error) => {
      if (!LOST_STREAM.test(error.message) || probing) return;
      probing = true;
      client.ping({ timeout: LOST_STREAM_PROBE_MS }).then(
        () => (probing = false),
        () => void client.close().catch(() => {}),
      );
    };
    return client;
  }
}

/** `work`, or an `McpTimeoutError` once `timeoutMs` passed (then `abandon` releases what `work` holds). */
function connectedWithin<T>(work: Promise<T>, timeoutMs: number, abandon: () => Promise<void>): Promise<T> {
  return withinTime(work, timeoutMs, () => {
    abandon().catch(() => {});
    return new McpTimeoutError(`no answer within ${timeoutMs} ms`);
  });
}

/** Waits for the session's end at most `timeoutMs`; whether the server heard it or not, the session is closed after. */
async function endedWithin(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

/** The server no longer knows the session (expired, or restarted): Streamable HTTP's 404, or the HTTP+SSE transport's to a message. The request never reached a session: it may go again on a new one. */
function sessionGone(error: unknown): boolean {
  return (error instanceof StreamableHTTPError && error.code === 404) || (error instanceof Error && SSE_SESSION_GONE.test(error.message));
}
