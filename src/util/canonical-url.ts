/**
 * A URL path as the server will read it: servers and proxies decode
 * percent-escapes (`/%61dmin` is `/admin`, RFC 3986 §6.2.2.2) and then resolve
 * dot segments (`/x%2F..%2Fadmin`, `/x/%2e%2e/admin`). Rules about paths (a
 * tenant's denied MCP URLs, the operator's allowed URL prefixes) compare
 * this form, so a spelling cannot step past them.
 */
export function canonicalPath(pathname: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    // A malformed escape decodes to nothing a server would route: compared as written.
    return pathname;
  }
  return new URL(decoded.replaceAll('%', '%25').replaceAll('?', '%3F').replaceAll('#', '%23'), 'http://path.invalid').pathname;
}

/** The URL with its path in that form (origin, path, query; no fragment), for prefix comparisons. */
export function canonicalHref(url: URL): string {
  return `${url.origin}${canonicalPath(url.pathname)}${url.search}`;
}
