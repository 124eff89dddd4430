import { escapeRegExp } from './escape-reg-exp.ts';

/** What a secret reads as once redacted. */
export const REDACTED = '[redacted]';

/**
 * Shortest value treated as a secret. Shorter ones ("dev", a one-letter test
 * key) would blank ordinary words wherever they appear; real credentials are
 * longer (client keys must have 8 characters to be accepted at all).
 */
const MIN_SECRET_LENGTH = 8;

/**
 * Blanks known secret values out of text that came from outside: an upstream
 * or MCP server echoing the credential it was sent (in an error body, a
 * stream's error frame, a tool result) must not carry it on to a client, a
 * stored response or a log line. Each secret is also matched as it reads
 * inside JSON text and inside a URL. Text without a secret comes back as it
 * was, and a redactor without secrets does nothing at all.
 */
export class SecretRedactor {
  static readonly none = new SecretRedactor([]);
  readonly #pattern: RegExp | null;

  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < MIN_SECRET_LENGTH) continue;
      forms.add(secret);
      forms.add(JSON.stringify(secret).slice(1, -1));
      forms.add(encodeURIComponent(secret));
    }
    // Longest first, so a secret containing another is blanked whole.
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#pattern = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'g') : null;
  }

  /** Whether there is anything to redact (callers skip installing hooks otherwise). */
  get active(): boolean {
    return this.#pattern !== null;
  }

  redact(text: string): string {
    return this.#pattern ? text.replace(this.#pattern, REDACTED) : text;
  }

  /** An error's fields as a client sees them (`message`, and `code` and `param`, which an upstream's error may fill too), without secrets, changed in place. */
  redactFields<T extends { message: string; code?: string | null; param?: string | null }>(error: T): T {
    if (!this.#pattern) return error;
    error.message = this.redact(error.message);
    if (typeof error.code === 'string') error.code = this.redact(error.code);
    if (typeof error.param === 'string') error.param = this.redact(error.param);
    return error;
  }

  /** The same error with the secrets gone from its message and stack, and from those of its causes. */
  redactError<T>(error: T): T {
    if (!this.#pattern) return error;
    let current: unknown = error;
    for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
      current.message = this.redact(current.message);
      if (current.stack) current.stack = this.redact(current.stack);
      current = current.cause;
    }
    return error;
  }
}

/**
 * The secrets in HTTP headers meant for one server: every value, and the
 * credential after an authorization scheme ("Bearer <token>"), which a server
 * may echo on its own.
 */
export function headerSecrets(headers: Readonly<Record<string, string>>): string[] {
  return Object.values(headers).flatMap((value) => [value, ...value.split(/\s+/).slice(1)]);
}

/** Query parameters that commonly carry credentials. */
export const SECRET_QUERY_PARAMETER = /key|token|secret|password|passwd|auth|sig|^code$/i;

/** The credentials a URL carries: its password (or a lone user name, often a token) and secret-looking query values, raw and decoded. */
export function urlSecrets(text: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return [];
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  // A lone user name is often a token; beside a password it is just a name.
  const raw = [url.password || url.username, ...[...url.searchParams].filter(([name]) => SECRET_QUERY_PARAMETER.test(name)).map(([, value]) => value)];
  return raw.filter((secret) => secret !== '').flatMap((secret) => [secret, safeDecode(secret)]);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
