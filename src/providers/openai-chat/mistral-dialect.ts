import { createHash } from 'node:crypto';
import type { ChatMessage } from './chat-wire.ts';

/**
 * What Mistral's API — and vLLM or other servers serving a Mistral model with
 * its own tokenizer — refuses in a conversation other servers take:
 *
 * - call ids other than nine letters and digits ("Tool call id was call_… but
 *   must be a-z, A-Z, 0-9, with a length of 9"): a conversation begun on
 *   another provider, or with ids the gateway made, could not go on there.
 *   Each such id goes as nine characters of its own hash: the same id is the
 *   same nine characters in every request (a call and its output still pair
 *   up; prompt caches still match), and ids that already fit go as they are;
 * - a user message right after tool results ("Unexpected role 'user' after
 *   role 'tool'"), which a client answering calls and saying more in one
 *   request sends, and the gateway itself when a tool answered with images:
 *   an assistant turn goes between them. It
 *   says "Done." — Mistral refuses an assistant message with neither content
 *   nor calls (what other clients of Mistral's API put there too);
 * - `developer` messages, and `system` ones after the conversation began
 *   (`asMistralRole`);
 * - fields of other servers on an assistant message (422 "Extra inputs are
 *   not permitted"): the reasoning another server gave (`reasoning_content`, `reasoning`,
 *   OpenRouter's `reasoning_details`) stays behind when a conversation moves here.
 *
 * Only the outgoing history changes: clients keep the ids they were given.
 * `auto`: these rules for models named as Mistral's (mistral…, codestral, devstral, …).
 */
export type ChatDialect = 'auto' | 'openai' | 'mistral';

const MISTRAL_MODEL = /(?:^|[/:_-])(?:mistral|mixtral|codestral|devstral|magistral|ministral|pixtral|voxtral)/i;
const NINE_ALPHANUMERICS = /^[A-Za-z0-9]{9}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function speaksMistral(dialect: ChatDialect, model: string): boolean {
  return dialect === 'mistral' || (dialect === 'auto' && MISTRAL_MODEL.test(model));
}

export function nineAlphanumerics(id: string): string {
  if (NINE_ALPHANUMERICS.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let index = 0; index < 9; index++) out += ALPHABET[digest[index]! % ALPHABET.length];
  return out;
}

const BRIDGE: ChatMessage = { role: 'assistant', content: 'Done.' };

/** The messages as Mistral takes them: an assistant turn wherever another role follows tool results, instructions as Mistral's roles allow, and no other server's fields. */
export function asMistralTakesThem(messages: ChatMessage[]): ChatMessage[] {
  const taken: ChatMessage[] = [];
  for (const written of messages) {
    const message = asMistralRole(written, taken.every((earlier) => earlier.role === 'system'));
    if (message.role === 'user' && taken.at(-1)?.role === 'tool') taken.push(BRIDGE);
    if (message.role === 'assistant' && (message.reasoning_content !== undefined || message.reasoning !== undefined || message.reasoning_details !== undefined)) {
      const { reasoning_content: _content, reasoning: _reasoning, reasoning_details: _details, ...own } = message;
      taken.push(own);
    } else taken.push(message);
  }
  return taken;
}

/**
 * Mistral has no `developer` role, and takes `system` messages only before
 * the conversation (after an assistant or tool message: "Unexpected role
 * 'system' after role 'assistant'"): leading instructions are `system`, later
 * ones (Codex adds developer messages as it goes) a user message.
 */
function asMistralRole(message: ChatMessage, leading: boolean): ChatMessage {
  if (message.role !== 'system' && message.role !== 'developer') return message;
  if (leading) return { ...message, role: 'system' };
  return { role: 'user', content: message.content };
}
