import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { canonicalHref } from '../../util/canonical-url.ts';

/**
 * Where the gateway may connect on a client's behalf. Request-supplied MCP
 * server URLs must be http(s) and must not reach loopback, private,
 * link-local, CGNAT, multicast or other special addresses (IPv4-mapped IPv6
 * included, cloud metadata among them) — checked on the URL, on the address
 * DNS resolves to at connect time, and on every redirect. Operators can allow
 * specific targets by URL prefix.
 */
export class EgressRefused extends Error {
  override readonly name = 'EgressRefused';
}

/**
 * Whether a URL path holds an escaped `/` or `\` (`%2F`, `%5C`): decoded, it
 * has other segments than as written, and servers differ on which they route
 * by. Other escapes (`%7E`, `%40`, `%c3%a9`) change no segment: their readings
 * agree, and the rules compare the decoded one.
 */
export function readsTwoWays(pathname: string): boolean {
  return /%(2f|5c)/i.test(pathname);
}

/** The egress policy's refusal behind a failure (a fetch's "fetch failed" carries it as its cause), to be said in its own words; null for any other failure. */
export function egressRefusalIn(error: unknown): Error | null {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof EgressRefused) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error && /egress policy refuses/.test(error.message) ? error : null;
}

const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 of any IPv4
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
  ['fd00:ec2::254', 128], // AWS metadata over IPv6
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6 text) is one the gateway must not connect to. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = embeddedIpv4(address);
  if (mapped !== null) return isForbiddenAddress(mapped);
  return forbidden.check(address, 'ipv6');
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible
 * (`::a.b.c.d`) IPv6 address, in whatever notation it was written.
 */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address.toLowerCase());
  if (!groups || groups.slice(0, 5).some((group) => group !== 0) || (groups[5] !== 0 && groups[5] !== 0xffff)) return null;
  if (groups[5] === 0 && groups[6] === 0) return null; // :: and ::1 are IPv6's own
  return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
}

function expandIpv6(address: string): number[] | null {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const missing = 8 - front.length - back.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const groups = [...front, ...new Array<number>(missing).fill(0), ...back];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

export interface EgressPolicyOptions {
  /** URL prefixes always allowed (operators' own MCP servers, tests), e.g. `http://127.0.0.1:9000/`. */
  allowedUrlPrefixes: readonly string[];
  /** Resolves host names at connect time (the system's resolver unless tests name another). */
  lookup?: typeof dnsLookup;
}

export class EgressPolicy {
  readonly #allowed: readonly string[];
  readonly #agent: Agent;

  constructor(options: EgressPolicyOptions) {
    // Compared in canonical form (util/canonical-url.ts): a request URL spelt `…/mcp/..%2Fadmin` leaves the prefix, whatever its text says.
    this.#allowed = options.allowedUrlPrefixes.map((prefix) => {
      const url = URL.parse(prefix);
      return url ? canonicalHref(url) : prefix;
    });
    const resolve = options.lookup ?? dnsLookup;
    // Every connection's resolved address is checked before the socket opens.
    this.#agent = new Agent({
      connect: {
        lookup: (hostname, lookupOptions, callback) => {
          resolve(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
            if (error) return callback(error, '', 0);
            const list = addresses as LookupAddress[];
            // No exception for a host an allowed prefix names: those URLs never come through this agent, and any other
            // URL on that host (another port or path, a redirect) is no more allowed than the host's address is.
            const refused = list.find((entry) => isForbiddenAddress(entry.address));
            if (refused) return callback(new EgressRefused(`${hostname} resolves to ${refused.address}, which the egress policy refuses.`), '', 0);
            if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, list);
            return callback(null, list[0]!.address, list[0]!.family);
          });
        },
      },
    });
  }

  /**
   * Throws `EgressRefused` unless the URL may be fetched: http(s), and not
   * naming a forbidden address literally (in any of the forms WHATWG URL
   * parsing normalises: `127.1`, decimal, octal, hex, bracketed IPv6).
   */
  check(rawUrl: string): URL {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new EgressRefused(`'${rawUrl}' is not a valid URL.`);
    }
    // A path a server may read two ways (`/admin/..%2Fmcp/`: `/mcp/` decoded, under `/admin/` as Node and Express
    // route it) could be judged by one reading and served by the other: refused rather than read either way.
    if (readsTwoWays(url.pathname)) throw new EgressRefused(`The path '${url.pathname}' has an escaped slash, which servers read differently; name the server by its plain path.`);
    if (this.isAllowedByPrefix(canonicalHref(url))) return url;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EgressRefused(`Only http and https URLs are allowed, not ${url.protocol}`);
    if (url.username || url.password) throw new EgressRefused('URLs with credentials are not allowed.');
    // `localhost.` is `localhost`: the trailing dot only makes the name absolute.
    const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (isIP(host) && isForbiddenAddress(host)) throw new EgressRefused(`${host} is an address the egress policy refuses.`);
    if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host === 'metadata.google.internal') {
      throw new EgressRefused(`${host} is a host the egress policy refuses.`);
    }
    return url;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /**
   * Whether a URL, in canonical form (`canonicalHref`), lies under one of the
   * allowed prefixes, segment by segment: `…/mcp` allows `…/mcp` and
   * `…/mcp/…`, not `…/mcp-admin`.
   */
  isAllowedByPrefix(href: string): boolean {
    return this.#allowed.some((prefix) => href.startsWith(prefix) && (prefix.endsWith('/') || href.length === prefix.length || href[prefix.length] === '/' || href[prefix.length] === '?'));
  }

  /**
   * A fetch for MCP transports: checks the URL, connects through the checking
   * agent, and follows redirects itself so that every hop is checked too.
   */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let url = this.check(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    let requestInit = init ?? {};
    for (let hop = 0; hop < 5; hop++) {
      const response = (await undiciFetch(url, { ...(requestInit as object), redirect: 'manual', dispatcher: this.isAllowedByPrefix(canonicalHref(url)) ? undefined : this.#agent } as never)) as unknown as Response;
      const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
      if (!location) return response;
      await response.body?.cancel();
      url = this.check(new URL(location, url).href);
      if (response.status === 303) requestInit = { ...requestInit, method: 'GET', body: null };
    }
    throw new EgressRefused('Too many redirects.');
  };
}
