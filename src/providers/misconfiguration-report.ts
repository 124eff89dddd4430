import type { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderLogger } from './upstream-errors.ts';

/** A refusal still going on is said again at most this often, with how many times it was heard since. */
const REPEAT_MS = 60_000;

const MISCONFIGURATION_CODES = new Set(['upstream_auth_failed', 'upstream_not_found', 'upstream_redirected']);

/**
 * Logs, at error level, an upstream refusing the gateway's own
 * configuration (credentials, base URL): the operator must act, and the
 * client only sees a 502. Each kind of refusal at once, then at most once a
 * minute (with the count since), whatever answers come between — an
 * upstream that refuses one request in two (one bad key of several behind
 * a proxy) is not a line per refusal: a wrong key under load was an error
 * line on every request. Never the key; the base URL without
 * credentials.
 */
export class MisconfigurationReport {
  readonly #log: ProviderLogger | undefined;
  readonly #fields: { provider: string; base_url: string };
  /** Per error code: when it was last said, and how often heard since. */
  readonly #said = new Map<string, { at: number; since: number }>();
  readonly #now: () => number;

  constructor(log: ProviderLogger | undefined, provider: string, baseUrl: string, now: () => number = () => performance.now()) {
    this.#log = log;
    this.#now = now;
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    this.#fields = { provider, base_url: url.toString().replace(/\/$/, '') };
  }

  heard(error: GatewayError): void {
    if (!this.#log || error.code === null || !MISCONFIGURATION_CODES.has(error.code)) return;
    const now = this.#now();
    const said = this.#said.get(error.code);
    if (said && now - said.at < REPEAT_MS) {
      said.since++;
      return;
    }
    this.#log.error({ ...this.#fields, code: error.code, ...(said && { repeated: said.since + 1 }) }, error.message);
    this.#said.set(error.code, { at: now, since: 0 });
  }
}
