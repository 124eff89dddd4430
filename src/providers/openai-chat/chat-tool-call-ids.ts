import { createHash } from 'node:crypto';

/**
 * Call ids as a Chat server takes them back. Mistral's API, and vLLM serving
 * a Mistral model with its own tokenizer, refuse any id but nine letters and
 * digits ("Tool call id was call_… but must be a-z, A-Z, 0-9, with a length
 * of 9"), so a conversation begun on another provider, or with ids the
 * gateway made, could not go on there. Each such id goes as nine characters
 * of its own hash: the same id is the same nine characters in every request
 * (a call and its output still pair up; prompt caches still match), and ids
 * that already fit go as they are. Only outgoing history changes: clients
 * keep seeing the ids they were given.
 *
 * `auto`: for models named as Mistral's (mistral…, codestral, devstral, …).
 */
export type ToolCallIdFormat = 'auto' | 'as-given' | 'nine-alphanumerics';

const MISTRAL_MODEL = /(?:^|[/:_-])(?:mistral|mixtral|codestral|devstral|magistral|ministral|pixtral|voxtral)/i;
const NINE_ALPHANUMERICS = /^[A-Za-z0-9]{9}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The id rewriting a request to `model` needs, or null when ids go as given. */
export function toolCallIdsFor(format: ToolCallIdFormat, model: string): ((id: string) => string) | null {
  if (format === 'as-given' || (format === 'auto' && !MISTRAL_MODEL.test(model))) return null;
  return nineAlphanumerics;
}

export function nineAlphanumerics(id: string): string {
  if (NINE_ALPHANUMERICS.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let index = 0; index < 9; index++) out += ALPHABET[digest[index]! % ALPHABET.length];
  return out;
}
