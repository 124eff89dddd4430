import { z } from 'zod';

/** Bytes of the AES-256-GCM key compaction items are sealed under. */
export const COMPACTION_KEY_BYTES = 32;

const HEX = /^[0-9a-f]{64}$/i;
// Standard or URL-safe alphabet, padding optional: `openssl rand -base64 32` gives 44 characters ending in one '='.
const BASE64 = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The configured compaction key as bytes: 64 hex digits (`openssl rand -hex 32`)
 * or base64, standard or URL-safe, of exactly 32 bytes (`openssl rand -base64 32`).
 * Hex is tried first (64 hex digits would also read as 48 bytes of base64).
 * Null when the text is neither.
 */
export function decodeCompactionKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (HEX.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!BASE64.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  return bytes.length === COMPACTION_KEY_BYTES ? bytes : null;
}

/** `compaction.key` in the configuration (a secret: masked and redacted like every `key`). */
export const compactionKey = z
  .string()
  .refine((text) => decodeCompactionKey(text) !== null, 'must be 32 random bytes written as 64 hex digits or as base64, e.g. from `openssl rand -base64 32`');
