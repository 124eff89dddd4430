/**
 * Reasoning an upstream gave in the clear (a Chat Completions server's
 * `reasoning_content`), carried in a reasoning item's `encrypted_content`
 * when the client asks for that (`include: ["reasoning.encrypted_content"]`).
 * Clients that keep the conversation themselves without storing it (the AI
 * SDK with `store: false`, LangChain's `zdrEnabled`) resend only reasoning
 * that has `encrypted_content`; without it, DeepSeek's thinking mode refuses
 * the next call of a tool loop. Prefixed like other providers' values, so
 * every other upstream recognises it as not its own and leaves it out.
 */
const PREFIX = 'loopgate.reasoning.v1:';

export function sealReasoningText(text: string): string {
  return PREFIX + Buffer.from(text, 'utf8').toString('base64');
}

/** The text a sealed value carries; null for any other value. */
export function openReasoningText(value: string): string | null {
  return value.startsWith(PREFIX) ? Buffer.from(value.slice(PREFIX.length), 'base64').toString('utf8') : null;
}
