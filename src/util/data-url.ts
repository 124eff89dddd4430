/**
 * A data URL (RFC 2397) read as upstreams that take inline bytes need it: a
 * media type and base64 data. Any spelling a browser reads is read: the type
 * and the `base64` token in any case, parameters (`;charset=utf-8`) before
 * `;base64`, and the percent-encoded form without it. Null for anything that
 * is not a data URL (a URL the upstream fetches itself).
 */
export interface DataUrl {
  /** Lower case, without parameters; `text/plain` when the URL names none, as RFC 2397 says. */
  mediaType: string;
  /** The bytes as base64. */
  data: string;
}

export function parseDataUrl(url: string): DataUrl | null {
  if (url.length < 5 || url.slice(0, 5).toLowerCase() !== 'data:') return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice(5, comma).split(';').map((field) => field.trim());
  const base64 = meta.length > 1 && meta.at(-1)!.toLowerCase() === 'base64';
  const mediaType = meta[0]!.toLowerCase() || 'text/plain';
  const payload = url.slice(comma + 1);
  // Whitespace inside base64 is legal in a data URL and meaningless to every decoder; upstreams refuse it.
  return { mediaType, data: base64 ? payload.replace(/\s+/g, '') : percentDecoded(payload).toString('base64') };
}

/** `%XX` escapes as the bytes they stand for, every other character as itself (a data URL's text is ASCII). */
function percentDecoded(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const hex = text[index] === '%' ? text.slice(index + 1, index + 3) : '';
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
    } else bytes.push(...Buffer.from(text[index]!, 'utf8'));
  }
  return Buffer.from(bytes);
}
