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

  /** `compile` is told which list an entry is on: where a value could be read two ways, an allow entry may take the narrower and a deny entry the wider. */
  constructor(config: AllowDenyConfig, compile: (entry: string, list: 'allow' | 'deny') => (value: T) => boolean) {
    this.#allow = config.allow ? config.allow.map((entry) => compile(entry, 'allow')) : null;
    this.#deny = (config.deny ?? []).map((entry) => compile(entry, 'deny'));
  }

  permits(value: T): boolean {
    if (this.#deny.some((matches) => matches(value))) return false;
    return this.#allow === null || this.#allow.some((matches) => matches(value));
  }
}

/** An MCP tool as tenants' rules judge it: its server's name (an operator server's, or the request's `server_label`) and the tool's own name, written `<server>__<tool>`. */
export interface McpToolName {
  server: string;
  tool: string;
}

/**
 * A tool-name pattern, `*` standing for any run of characters: `tools__*`
 * matches `tools__add`, `*__delete` every server's `delete`. Whole names only.
 *
 * An MCP tool is judged by its server and its own name, not by their join:
 * `<server>__<tool>` is ambiguous when a label holds `__` (a request's server
 * `ops__n` with a tool `x` joins to `ops__n__x`, which `ops__*` matches), so
 * a pattern matches where it parts at one of its `__` into a pattern the
 * server matches and one the tool does (`ops__*` is the server `ops`, and no
 * other). A deny entry also matches the joined name, as read before (`*__delete`
 * still refuses a tool named `admin__delete`): deny reads wide, allow narrow.
 */
export function toolNameMatcher(pattern: string, list: 'allow' | 'deny' = 'allow'): (name: string | McpToolName) => boolean {
  const whole = globOf(pattern);
  const parts: [RegExp, RegExp][] = [];
  for (let at = pattern.indexOf('__'); at >= 0; at = pattern.indexOf('__', at + 1)) parts.push([globOf(pattern.slice(0, at)), globOf(pattern.slice(at + 2))]);
  return (name) => {
    if (typeof name === 'string') return whole.test(name);
    if (parts.some(([server, tool]) => server.test(name.server) && tool.test(name.tool))) return true;
    // A pattern with no `__` (`*`, `*delete*`) is about the whole name, whichever list it is on.
    return (parts.length === 0 || list === 'deny') && whole.test(`${name.server}__${name.tool}`);
  };
}

function globOf(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 's');
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
