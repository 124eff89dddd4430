/**
 * The type of an image as its bytes say it: PNG, JPEG, GIF or WebP (what
 * every vision model reads), else null. Claude refuses an image whose
 * declared type is not what its bytes are, and a tool or client that names
 * the type wrongly (a JPEG screenshot labelled `image/png`) would fail the
 * whole response over it.
 */
export function imageTypeOf(base64: string): string | null {
  // 16 base64 characters are 12 bytes: enough for every signature below.
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  const ascii = head.toString('latin1');
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'image/gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp';
  return null;
}
