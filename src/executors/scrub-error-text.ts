import { isIP } from 'node:net';
import { isForbiddenAddress } from './mcp/egress-policy.ts';

/** What an internal address reads as once scrubbed. */
export const INTERNAL = '[internal]';

/*
 * Stack traces, line by line. A frame line carries code locations and
 * nothing the model can act on; the message line above it is kept.
 */
const FRAME_LINES = [
  /^\s+at\s+\S/, // JavaScript, Java, C#, and the location lines of Rust backtraces
  /^\s*\.\.\. \d+ (more|common frames omitted)\s*$/, // Java
  /^\s*File "[^"]*", line \d+/, // Python
];
/** Headers after which every indented line is part of the trace (Python's frames and source lines, Rust's backtrace). */
const INDENTED_TRACE_HEADER = /^\s*(Traceback \(most recent call last\):|stack backtrace:)\s*$/;
/** Go's panic dump: from the goroutine header to the next blank line. */
const GO_TRACE_HEADER = /^goroutine \d+ \[[^\]]*\]:\s*$/;

/** The text without stack-trace lines; unchanged when it has none. */
export function dropStackTraces(text: string): string {
  if (!text.includes('\n')) return text;
  const lines = text.split('\n');
  const kept: string[] = [];
  let trace: 'indented' | 'go' | null = null;
  for (const line of lines) {
    if (trace === 'indented' && /^\s/.test(line)) continue;
    if (trace === 'go' && line.trim() !== '') continue;
    trace = null;
    if (INDENTED_TRACE_HEADER.test(line)) trace = 'indented';
    else if (GO_TRACE_HEADER.test(line)) trace = 'go';
    else if (!FRAME_LINES.some((frame) => frame.test(line))) kept.push(line);
  }
  return kept.length === lines.length ? text : kept.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd();
}

/** Host names that resolve only inside a network. */
const INTERNAL_SUFFIX = /\.(internal|local|localhost|localdomain|lan|intranet|corp|home\.arpa|svc|cluster\.local)$/;

/**
 * Whether a URL's host is internal: a loopback, private, link-local or other
 * special address (the egress policy's list), `localhost`, a single-label
 * name (a container or service name) or an internal-only domain.
 */
export function isInternalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === '') return false;
  if (isIP(host)) return isForbiddenAddress(host);
  return host === 'localhost' || !host.includes('.') || INTERNAL_SUFFIX.test(host);
}

/** Absolute URLs of any scheme; trailing punctuation is the sentence's, not the URL's. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?'")}]+$/;
const IPV4_IN_TEXT = /(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?(?![\w]|\.\d)/g;
const IPV6_IN_TEXT = /(?<![\w:.])\[?((?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4})(?:%[\w.-]+)?\]?/gi;

/** Replaces URLs with `replace`'s answer; null keeps a public URL (its credentials blanked) and makes an internal one `[internal]`. */
export function scrubUrls(text: string, replace: (url: URL) => string | null): string {
  return text.replace(URL_IN_TEXT, (match) => {
    const trailing = TRAILING_PUNCTUATION.exec(match)?.[0] ?? '';
    const raw = match.slice(0, match.length - trailing.length);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return match;
    }
    const replacement = replace(url) ?? (url.protocol === 'file:' || isInternalHost(url.hostname) ? INTERNAL : withoutCredentials(url, raw));
    return replacement + trailing;
  });
}

/** Internal IP addresses standing alone in text (`connect ECONNREFUSED 10.0.3.7:9000`), with their port, become `[internal]`. */
export function scrubIpAddresses(text: string): string {
  return text
    .replace(IPV4_IN_TEXT, (match, address: string) => (isIP(address) === 4 && isForbiddenAddress(address) ? INTERNAL : match))
    .replace(IPV6_IN_TEXT, (match, address: string) => (isIP(address) === 6 && isForbiddenAddress(address) ? INTERNAL : match));
}

function withoutCredentials(url: URL, raw: string): string {
  if (!url.username && !url.password) return raw;
  url.username = '';
  url.password = '';
  return url.href;
}
