import { z } from 'zod';

/*
 * URLs are checked for their scheme at start-up: zod's plain z.url() takes
 * `localhost:11434/v1` (scheme "localhost:"), which then fails deep inside
 * the HTTP client on the first request.
 */

/** An absolute http:// or https:// URL (upstreams, MCP servers). */
export const httpUrl = z.url({ protocol: /^https?$/ }).describe('an absolute http:// or https:// URL such as http://localhost:11434/v1');

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
