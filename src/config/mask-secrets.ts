import type { ConfigPath } from './config-problem.ts';
import { SECRET_QUERY_PARAMETER } from '../util/secret-redactor.ts';

/** What a masked secret reads as. */
export const MASK = '***';

/** Keys whose values are secrets wherever they appear (API keys, passwords, tokens). */
const SECRET_KEY = /^(api_?key|key|password|secret|token|authorization)$/i;
/** Keys whose every value is a secret (MCP servers' headers carry credentials). */
const SECRET_CONTAINER = /^headers$/i;
/** Keys holding query parameters, whose values are secrets where their names say so (`subscription-key`, `sig`, Azure Functions' `code`), as in a URL's query. */
const QUERY_CONTAINER = /^queryParams$/i;
/**
 * Client keys: a list of `{key, tenant}` entries. The list itself, or an
 * entry that is not such an object, is shown nowhere: written wrongly (as
 * `API_KEYS`' `{"sk-…": "team"}`, or a bare key) it holds keys in the clear.
 */
const KEY_LIST = /^api_?keys$/i;

/** Whether the value at this configuration path is (or holds) a secret and must never be shown. */
export function isSecretPath(path: ConfigPath): boolean {
  return path.some((segment, index) => {
    if (typeof segment !== 'string') return false;
    if (SECRET_KEY.test(segment) || SECRET_CONTAINER.test(segment)) return true;
    const next = path[index + 1];
    if (QUERY_CONTAINER.test(segment)) return next === undefined || (typeof next === 'string' && SECRET_QUERY_PARAMETER.test(next));
    return KEY_LIST.test(segment) && index >= path.length - 2;
  });
}

/**
 * A URL safe to show: the password (or a lone user name, often a token) and
 * credential-like query parameters masked. Strings that are not absolute URLs
 * come back unchanged.
 */
export function maskUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  let masked = false;
  if (url.password) {
    url.password = MASK;
    masked = true;
  } else if (url.username) {
    url.username = MASK;
    masked = true;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_QUERY_PARAMETER.test(name)) {
      url.searchParams.set(name, MASK);
      masked = true;
    }
  }
  // Serialising changes spelling (a trailing slash, case); only do it when something was hidden.
  return masked ? url.toString().replaceAll(encodeURIComponent(MASK), MASK) : value;
}

/**
 * A value the configuration refused, safe to repeat in the message that
 * says so. Such a value often does not parse as a URL because of its
 * credentials (a password holding `#`, `/` or `@`), so `maskUrl` would leave
 * them; here whatever stands between `scheme://` and the last `@` is masked,
 * and credential-like query parameters, by the text alone. It may hide more
 * than the credentials of a URL whose path holds an `@`: never less.
 */
export function maskRefusedValue(value: string): string {
  return maskUrl(value)
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)(.*)@/is, `$1${MASK}@`)
    // A URL written without its scheme (`user:password@host`, `//:password@host`): what comes before the host is masked all the same.
    .replace(/^(\/\/)?[^/\s@]+@/, (_whole, slashes: string | undefined) => `${slashes ?? ''}${MASK}@`)
    .replace(/([?&;])([^=&#]+)=([^&#]*)/g, (whole, separator: string, name: string) => (SECRET_QUERY_PARAMETER.test(name) ? `${separator}${name}=${MASK}` : whole));
}

/** A deep copy of a configuration with every secret masked and every URL's credentials hidden. */
export function maskSecrets<T>(value: T): T {
  return maskValue(value, false) as T;
}

function maskValue(value: unknown, secret: boolean): unknown {
  if (value === null || value === undefined) return value;
  if (secret && typeof value !== 'object') return MASK;
  if (typeof value === 'string') return maskUrl(value);
  if (Array.isArray(value)) return value.map((item) => maskValue(item, secret));
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => {
        if (SECRET_CONTAINER.test(key) && inner !== null && typeof inner === 'object') return [key, Object.fromEntries(Object.keys(inner).map((name) => [name, MASK]))];
        if (QUERY_CONTAINER.test(key) && inner !== null && typeof inner === 'object') return [key, Object.fromEntries(Object.entries(inner).map(([name, parameter]) => [name, SECRET_QUERY_PARAMETER.test(name) ? MASK : maskValue(parameter, secret)]))];
        return [key, maskValue(inner, secret || SECRET_KEY.test(key))];
      }),
    );
  }
  return value;
}
