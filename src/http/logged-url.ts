import { maskUrl } from '../config/mask-secrets.ts';

const ORIGIN = 'http://gateway';

/**
 * A request's URL as its log lines show it: query parameters that look like
 * credentials masked. The gateway reads no key from a query, but clients
 * used to Google's APIs send theirs as `?key=`, and a refused request's line
 * would otherwise carry it into the logs.
 */
export function loggedUrl(url: string): string {
  if (!url.includes('?')) return url;
  const masked = maskUrl(ORIGIN + url);
  return masked.startsWith(ORIGIN) ? masked.slice(ORIGIN.length) : url;
}
