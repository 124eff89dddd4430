import { canonicalPath } from '../util/canonical-url.ts';
import { escapeRegExp } from '../util/escape-reg-exp.ts';

/** An allow list and a deny list as configured: no allow list means everything not denied. */
export interface AllowDenyConfig {
  allow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
}

/**
 * A value is permitted when no deny entry matches it and, if there is an
 * allow list, an allow entry does: deny wins over allow, and an allow list
 * (even an empty one) permits only what it lists.
 */
export class AllowDenyList<T> {
  readonly #allow: readonly ((value: T) => boolean)[] | null;
  readonly #deny: readonly ((value: T) => boolean)[];

  constructor(config: AllowDenyConfig, compile: (entry: string) => (value: T) => boolean) {
    this.#allow = config.allow ? config.allow.map(compile) : null;
    this.#deny = (config.deny ?? []).map(compile);
  }

  permits(value: T): boolean {
    if (this.#deny.some((matches) => matches(value))) return false;
    return this.#allow === null || this.#allow.some((matches) => matches(value));
  }
}

/** A tool-name pattern, `*` standing for any run of characters: `tools__*` matches `tools__add`, `*__delete` every server's `delete`. Whole names only. */
export function toolNameMatcher(pattern: string): (name: string) => boolean {
  const expression = new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 's');
  return (name) => expression.test(name);
}

/**
 * An MCP server URL entry: an origin (`https://mcp.example.com`) matches
 * every URL of that scheme, host and port; one with a path matches that path
 * and what lies below it, segment by segment (`/team` covers `/team` and
 * `/team/mcp`, not `/teams`). It is given parsed URLs (`parseUrl`), so
 * spellings of one address (case, default port, `127.1`) cannot slip past;
 * query and fragment play no part. A text that was no URL (null) matches nothing.
 */
export function serverUrlMatcher(entry: string): (url: URL | null) => boolean {
  const rule = new URL(entry);
  const base = canonicalPath(rule.pathname);
  const below = base.endsWith('/') ? base : `${base}/`;
  return (url) => {
    if (url === null || url.origin !== rule.origin) return false;
    const path = canonicalPath(url.pathname);
    return base === '/' || path === base || path.startsWith(below);
  };
}

/** The URL a text names, or null; parsed once for all the entries it is matched against. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
