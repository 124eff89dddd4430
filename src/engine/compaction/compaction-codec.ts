import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { invalidRequest } from '../../errors/gateway-error.ts';

/** What a compaction item carries, readable only by a gateway holding the key, for the tenant it was made for. */
export interface CompactionContent {
  /** The model's summary of the compacted window: what the model is shown in its place. */
  summary: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model that wrote the summary (as the client named it). */
  model: string;
}

/** First byte of every sealed item; a later layout gets the next number. */
const FORMAT_VERSION = 1;
/** AES-256. */
const KEY_BYTES = 32;
const KEY_ID_BYTES = 4;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Seals and opens the `encrypted_content` of `compaction` items: AES-256-GCM
 * under the server's key, the tenant bound as associated data, so an item
 * altered, cut short, sealed under another key or made for another tenant
 * does not open.
 *
 * Layout, base64url without padding: version (1 byte) ‖ key id (4 bytes:
 * the start of a SHA-256 of the key, so a foreign key can be told apart from
 * tampering) ‖ nonce (12 random bytes) ‖ ciphertext ‖ GCM tag (16 bytes).
 * The associated data is the version and key id, then the tenant. The
 * plaintext is JSON `{summary, created_at, model}`.
 */
export class CompactionCodec {
  readonly #key: Buffer;
  readonly #keyId: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`A compaction key has ${KEY_BYTES} bytes, not ${key.length}.`);
    this.#key = Buffer.from(key);
    this.#keyId = createHash('sha256').update('loopgate compaction key id\0').update(key).digest().subarray(0, KEY_ID_BYTES);
  }

  /** A codec under a fresh random key: its items open only in this process. */
  static withRandomKey(): CompactionCodec {
    return new CompactionCodec(randomBytes(KEY_BYTES));
  }

  seal(tenant: string, content: CompactionContent): string {
    const header = Buffer.concat([Buffer.of(FORMAT_VERSION), this.#keyId]);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(associatedData(header, tenant));
    const plaintext = JSON.stringify({ summary: content.summary, created_at: content.createdAt, model: content.model });
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([header, nonce, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * The content of `encrypted`, or a 400 `invalid_encrypted_content` on `param`
   * (`input[3].encrypted_content`); `where` names the item in the message.
   */
  open(tenant: string, encrypted: string, param: string, where = `'${param}'`): CompactionContent {
    const unreadable = (why: string) => invalidRequest(`The compaction item in ${where} cannot be used: ${why}.`, param, 'invalid_encrypted_content');
    const bytes = BASE64URL.test(encrypted) ? Buffer.from(encrypted, 'base64url') : null;
    // Decoding ignores the spare bits of a last character: only the one spelling this gateway writes is taken, so an altered item never opens.
    if (bytes && bytes.toString('base64url') !== encrypted) throw unreadable('it could not be verified: it was altered or truncated');
    if (!bytes || bytes.length < HEADER_BYTES + NONCE_BYTES + TAG_BYTES || bytes[0] !== FORMAT_VERSION) {
      throw unreadable('it is not a compaction item made by this gateway (malformed or truncated)');
    }
    const header = bytes.subarray(0, HEADER_BYTES);
    if (!header.subarray(1).equals(this.#keyId)) {
      throw unreadable('it was sealed under another compaction key: another gateway, or this one before a restart without a configured compaction.key (COMPACTION_KEY); replicas must share one key');
    }
    const nonce = bytes.subarray(HEADER_BYTES, HEADER_BYTES + NONCE_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(header, tenant));
    decipher.setAuthTag(tag);
    let plaintext: string;
    try {
      plaintext = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES + NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable('it could not be verified: it was altered or truncated, or it belongs to another tenant');
    }
    const content = parseContent(plaintext);
    if (!content) throw unreadable('its content is not in a format this gateway reads');
    return content;
  }
}

function associatedData(header: Buffer, tenant: string): Buffer {
  return Buffer.concat([header, Buffer.from(`\0${tenant}`, 'utf8')]);
}

function parseContent(plaintext: string): CompactionContent | null {
  try {
    const value = JSON.parse(plaintext) as Record<string, unknown>;
    if (typeof value.summary !== 'string' || typeof value.created_at !== 'number' || typeof value.model !== 'string') return null;
    return { summary: value.summary, createdAt: value.created_at, model: value.model };
  } catch {
    return null;
  }
}
