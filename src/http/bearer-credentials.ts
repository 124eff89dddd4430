import { createHash } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header; null when there is none. */
export function bearerToken(authorization: string | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;
}

/** A credential as it is compared: its SHA-256 digest, so `timingSafeEqual` can compare any two in constant time. */
export function credentialDigest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
