import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { GatewayError } from '../errors/gateway-error.ts';
import { isLocalhostName, originNotAllowed, type BrowserOrigins } from './browser-origins.ts';

/**
 * What keeps other websites' pages out of a gateway that asks no API key.
 * CORS alone does not: a page of a name its author points at this machine
 * (DNS rebinding) is same-origin to its browser, so the browser never asks,
 * sends no `Origin` on a GET (nor `Sec-Fetch-Site`, which goes only to https
 * and localhost pages), and lets the page read the answer — stored
 * responses, the inspector's list, usage. What a rebound page cannot change
 * is the `Host` its requests carry (the name it was opened by) and its
 * browser's `User-Agent` (every browser's starts `Mozilla/`). So a browser's
 * request is let in when its page's origin is allowed (`server.corsOrigins`,
 * or this machine's pages), or when it names the gateway by a host no one
 * else can point here: an address, a `localhost` name, or the host of an
 * origin the operator listed. Clients that are not browsers (SDKs, agents,
 * curl) are not affected, whatever host they name.
 */
export class PageGuard {
  readonly #origins: BrowserOrigins | null;
  /** Hosts (with their ports) of the origins the operator listed: the gateway's own page may be served under one of them. */
  readonly #listedHosts: ReadonlySet<string>;

  constructor(origins: BrowserOrigins | null) {
    this.#origins = origins;
    const listed = origins && Array.isArray(origins.allowed) ? origins.allowed : [];
    this.#listedHosts = new Set(listed.flatMap((origin) => URL.parse(origin)?.host ?? []));
  }

  /** The refusal of a browser page's request the gateway does not admit; null for any other request. */
  refusal(headers: IncomingHttpHeaders): GatewayError | null {
    const { origin, host } = headers;
    if (origin !== undefined) {
      if (this.#origins?.allows(origin)) return null;
      // The gateway's own page, opened by a name only it can have.
      return URL.parse(origin)?.host === host && this.#trusted(host) ? null : originNotAllowed(origin);
    }
    if (!isBrowser(headers)) return null;
    return this.#trusted(host) ? null : hostNotAllowed(host ?? '');
  }

  #trusted(host: string | undefined): boolean {
    if (host === undefined) return false;
    if (this.#listedHosts.has(host)) return true;
    const hostname = URL.parse(`http://${host}`)?.hostname;
    if (hostname === undefined) return false;
    return isLocalhostName(hostname) || isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
  }
}

/** A browser's request without `Origin` (a GET, a navigation): Fetch Metadata where the browser sends it, its `User-Agent` everywhere. */
function isBrowser(headers: IncomingHttpHeaders): boolean {
  return headers['sec-fetch-site'] !== undefined || headers['user-agent']?.startsWith('Mozilla/') === true;
}

function hostNotAllowed(host: string): GatewayError {
  return new GatewayError({
    status: 403,
    type: 'invalid_request_error',
    code: 'host_not_allowed',
    message: `Browser pages may not call this gateway by the name '${host}': without API keys, a page must open it by address or a localhost name (a name anyone can point at this machine would let their pages read it), or its origin must be in server.corsOrigins (CORS_ORIGINS). (A request counts as a browser's by its Origin, Sec-Fetch-Site or a browser's User-Agent; behind a proxy, pass on the Host the browser used.)`,
  });
}
