import { z } from 'zod';

/*
 * URLs are checked for their scheme at start-up: zod's plain z.url() takes
 * `localhost:11434/v1` (scheme "localhost:"), which then fails deep inside
 * the HTTP client on the first request.
 */

/** An absolute http:// or https:// URL (upstreams, MCP servers). */
export const httpUrl = z.url({ protocol: /^https?$/ }).describe('an absolute http:// or https:// URL such as http://localhost:11434/v1');

/**
 * An MCP server's URL: no user name or password in it, which fetch refuses
 * to send (every call would fail with an error quoting them).
 */
export const mcpServerUrl = httpUrl.refine((url) => {
  // A URL that does not parse is httpUrl's to report.
  const parsed = URL.parse(url);
  return parsed === null || (parsed.username === '' && parsed.password === '');
}, 'credentials in the URL are never sent (fetch refuses such URLs): give them in headers instead, e.g. "headers": {"Authorization": "Basic <base64 of user:password>"}');

/**
 * A provider's base URL: only its scheme, host, port and path are used, so
 * anything else in it is refused rather than dropped in silence (a copied
 * `?api-version=…` never reached Azure; `user:password@` never reached anyone).
 */
export const providerBaseUrl = httpUrl.superRefine((url, context) => {
  // A URL that does not parse, or not as http(s), is httpUrl's to report.
  const parsed = URL.parse(url);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return;
  if (parsed.username !== '' || parsed.password !== '') context.addIssue({ code: 'custom', message: 'credentials in a base URL are never sent: give the key as the provider\'s apiKey' });
  if (parsed.search !== '') context.addIssue({ code: 'custom', message: "a query in a base URL is never sent: give its parameters as the provider's queryParams (api-version as apiVersion) and leave the query out of the URL" });
  if (parsed.hash !== '') context.addIssue({ code: 'custom', message: 'a base URL has no fragment: leave it out' });
});

/** An absolute redis:// or rediss:// URL. */
export const redisUrl = z.url({ protocol: /^rediss?$/ }).describe('an absolute redis:// or rediss:// URL such as redis://localhost:6379');

/**
 * A hint, not an error: OpenAI-compatible servers nearly always serve under a
 * path such as `/v1`, and a base URL without one yields 404s for every request.
 */
export function missingApiPathHint(baseUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return null;
  }
  if (url.pathname !== '/' && url.pathname !== '') return null;
  return `has no path; OpenAI-compatible servers usually serve under /v1 (${new URL('/v1', url).href}): without it, requests may fail with 404`;
}

/** The paths each kind of provider adds to its base URL itself, as a base URL that already ends in one would have them twice. */
const ADDED_PATHS: Readonly<Record<string, { adds: string; endings: readonly string[] }>> = {
  'openai-chat': { adds: '/chat/completions', endings: ['/chat/completions', '/completions'] },
  'openai-responses': { adds: '/responses', endings: ['/responses'] },
  // The Anthropic SDK adds `/v1/messages` to the origin it is given.
  anthropic: { adds: '/v1/messages', endings: ['/v1/messages', '/messages', '/v1'] },
  gemini: { adds: '/v1beta/models/…', endings: ['/v1beta', '/v1beta/models', '/models'] },
};

/**
 * A hint, not an error: a base URL written as the endpoint itself (a Chat
 * Completions URL pasted whole, an Anthropic URL ending in `/v1`) gets the
 * provider's own path added again, and every request then fails with 404.
 */
export function endpointPathHint(providerType: string, baseUrl: string): string | null {
  const added = ADDED_PATHS[providerType];
  if (!added) return null;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return null;
  }
  const path = url.pathname.replace(/\/+$/, '');
  const ending = added.endings.find((candidate) => path.toLowerCase().endsWith(candidate));
  if (!ending) return null;
  const meant = new URL(url.href);
  meant.pathname = path.slice(0, path.length - ending.length) || '/';
  const shown = meant.href.replace(/\/$/, '');
  return `ends in ${ending}, but the gateway adds ${added.adds} itself, so requests would go to …${ending}${added.adds} and fail with 404: use ${shown}`;
}

/**
 * A browser origin for CORS, as browsers send it in `Origin`: scheme, host
 * and port only (`https://app.example.com`), or `*` for any. Anything else
 * (a trailing slash, a path, a bare host name) never equals an `Origin`, so
 * CORS would quietly never apply; the refusal names the origin meant.
 */
export const browserOrigin = z.string().superRefine((value, context) => {
  if (value === '*') return;
  const meant = originOf(value);
  if (meant === value) return;
  context.addIssue({
    code: 'custom',
    message: meant
      ? `not an origin as browsers send it (scheme, host and port, nothing after): use "${meant}"`
      : 'not an origin such as https://app.example.com (scheme, host and port), nor * for any',
  });
});

function originOf(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!url.host) return null;
  // Browsers send the scheme and host in lower case and leave out a default port, as URL does.
  return `${url.protocol}//${url.host}`;
}
