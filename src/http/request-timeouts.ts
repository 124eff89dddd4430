import type { ServerOptions } from 'node:http';

/** Node's own bound on the headers alone, kept unless the whole request's bound is shorter. */
const HEADERS_TIMEOUT_MS = 60_000;
/** Node's own interval for checking it (a request is cut up to this late). */
const CHECK_INTERVAL_MS = 30_000;

/**
 * The server options that bound how long a request may take to arrive
 * (`server.requestTimeoutMs`), answered with a 408 (client-error-reply.ts).
 *
 * Node's `requestTimeout` covers receiving the request only, so streamed
 * responses are not bounded by it. It is given to `http.createServer`, not
 * only set afterwards as Fastify's own option does: set afterwards it never
 * cut a trickling request (seen on Node 24), and the checking interval is a
 * constructor option. The check runs often enough for a short bound to hold.
 */
export function requestTimeoutOptions(requestTimeoutMs: number): { requestTimeout: number; http: ServerOptions } {
  if (requestTimeoutMs === 0) return { requestTimeout: 0, http: { requestTimeout: 0, headersTimeout: HEADERS_TIMEOUT_MS } };
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, Math.max(100, Math.floor(requestTimeoutMs / 4))),
    },
  };
}
