import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';

/**
 * Which browser pages may read the gateway's answers (`server.corsOrigins`),
 * and what they may read of them: one policy for the CORS plugin and for the
 * answers that come before any hook runs (a path the router refuses), which
 * a page must be able to read as well.
 */
export class BrowserOrigins {
  /** Any origin, the listed ones, or pages on this machine only (`loopback`: the default without API keys). */
  readonly allowed: readonly string[] | '*' | 'loopback';
  /** What a page may read beyond the basic headers: one string (the plugin would join an array anew for every response). */
  readonly exposedHeaders: string;

  constructor(origins: readonly string[] | 'loopback', exposedHeaders: readonly string[]) {
    this.allowed = origins !== 'loopback' && origins.includes('*') ? '*' : origins;
    this.exposedHeaders = exposedHeaders.join(', ');
  }

  allows(origin: string): boolean {
    if (this.allowed === '*') return true;
    return this.allowed === 'loopback' ? isLocalOrigin(origin) : this.allowed.includes(origin);
  }

  /**
   * Whether a browser page of `origin` may open a WebSocket on a gateway that
   * asks API keys, the request's `Host` being `host`: an allowed origin, or
   * the gateway's own page (without keys, page-guard.ts decides).
   */
  admits(origin: string, host: string | undefined): boolean {
    return this.allows(origin) || URL.parse(origin)?.host === host;
  }

  /** What `Access-Control-Allow-Origin` says to a page of an allowed origin. */
  allowOriginFor(origin: string): string {
    return this.allowed === '*' ? '*' : origin;
  }

  /**
   * For an answer the CORS plugin never saw: a page of an allowed origin may
   * read it; a preflight for it is answered (else the browser would not send
   * the request at all, and the page would see only a network error).
   * True when that preflight was answered and nothing is left to send.
   */
  answerOutsideHooks(request: FastifyRequest, reply: FastifyReply): boolean {
    const origin = request.headers.origin;
    reply.header('vary', 'Origin');
    if (origin === undefined || !this.allows(origin)) return false;
    reply.header('access-control-allow-origin', this.allowOriginFor(origin));
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      reply.header('access-control-expose-headers', this.exposedHeaders);
      return false;
    }
    const askedHeaders = request.headers['access-control-request-headers'];
    void reply
      .code(204)
      .headers({ 'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS', ...(askedHeaders && { 'access-control-allow-headers': askedHeaders }), 'access-control-max-age': '600' })
      .send();
    return true;
  }
}

/**
 * The origins a gateway without API keys lets call it when `server.corsOrigins`
 * is not set: pages served from this machine (a frontend's dev server), and
 * apps and extensions (`tauri://localhost`, `chrome-extension://…`: no website
 * can send an origin of such a scheme; a sandboxed or `file:` page sends
 * `null`, refused). With no key to ask for, any other website a user opens
 * could otherwise run responses on the operator's account, and read and
 * delete what is stored.
 */
export function isLocalOrigin(origin: string): boolean {
  const url = URL.parse(origin);
  if (!url) return false;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true;
  const host = url.hostname;
  return isLocalhostName(host) || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** `localhost` or a name under it: browsers resolve these to this machine themselves, so no one else's DNS can point one here. */
export function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/** What a page the gateway does not admit is told (`BrowserOrigins.admits`), over HTTP and on the WebSocket upgrade. */
export function originNotAllowed(origin: string): GatewayError {
  return new GatewayError({
    status: 403,
    type: 'invalid_request_error',
    code: 'origin_not_allowed',
    message: `Requests from pages of the origin '${origin}' are not allowed: add it to server.corsOrigins (CORS_ORIGINS) to let pages from it call the gateway (without API keys, only pages on this machine may).`,
  });
}
