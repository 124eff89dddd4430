import type { InputItem } from '../../protocol/input-items.ts';

/**
 * Gemini's thought signatures must go back on the very part they came on
 * (a function call, the answer's text, a thought). They travel in a
 * reasoning item's `encrypted_content`, with the part they belong to,
 * prefixed so other providers' values are recognised as foreign and left out.
 */
const PREFIX = 'gemini.signature.v1:';

export type SignedPart =
  /**
   * A call's signature, by the id the model gave the call; and by its name
   * and arguments (as their text), for a call the gateway shows the model
   * under an id of its own (an MCP call, whose item id is the gateway's).
   */
  | { part: 'call'; callId: string; signature: string; name?: string; arguments?: string }
  | { part: 'text'; signature: string }
  | { part: 'thought'; text: string; signature: string };

export function encodeSignature(signed: SignedPart): string {
  return PREFIX + Buffer.from(JSON.stringify(signed), 'utf8').toString('base64');
}

export function decodeSignature(value: string): SignedPart | null {
  if (!value.startsWith(PREFIX)) return null;
  try {
    const signed = JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64').toString('utf8')) as Partial<SignedPart> & Record<string, unknown>;
    if (typeof signed.signature !== 'string') return null;
    if (signed.part === 'call' && typeof signed.callId === 'string') {
      return { part: 'call', callId: signed.callId, signature: signed.signature, ...(typeof signed.name === 'string' && { name: signed.name }), ...(typeof signed.arguments === 'string' && { arguments: signed.arguments }) };
    }
    if (signed.part === 'text') return { part: 'text', signature: signed.signature };
    if (signed.part === 'thought' && typeof signed.text === 'string') return { part: 'thought', text: signed.text, signature: signed.signature };
    return null;
  } catch {
    return null;
  }
}

/**
 * The signatures calls came with, in the reasoning items among `items`: by
 * call id, and by name and arguments for a call the gateway's own loop shows
 * under its item id (an MCP call), each of those once (a later call that
 * looks the same is another call).
 */
export function callSignatures(items: InputItem[]): { of(call: { call_id: string; name: string; arguments: string }): string | undefined } {
  const byId = new Map<string, string>();
  const byCall = new Map<string, string>();
  for (const item of items) {
    if (item.type !== 'reasoning' || !item.encrypted_content) continue;
    const signed = decodeSignature(item.encrypted_content);
    if (signed?.part !== 'call') continue;
    byId.set(signed.callId, signed.signature);
    if (signed.name !== undefined && signed.arguments !== undefined) byCall.set(`${signed.name}\0${signed.arguments}`, signed.signature);
  }
  return {
    of(call) {
      if (byId.size === 0) return undefined;
      const found = byId.get(call.call_id);
      if (found !== undefined) return found;
      const key = `${call.name}\0${call.arguments}`;
      const signature = byCall.get(key);
      byCall.delete(key);
      return signature;
    },
  };
}

/**
 * Google's documented stand-in for a function call's missing signature (a
 * call from another provider's history, or resent by a client without it):
 * Gemini 3 refuses a step whose first call is unsigned, and this value makes
 * it skip that check. Both the Gemini API and Vertex AI accept this spelling.
 */
export const SKIP_SIGNATURE_VALIDATOR = 'skip_thought_signature_validator';

/**
 * Whether `model` checks call signatures: Gemini 3 does, and so does anything
 * not named as an older Gemini (`gemini-flash-latest` and other aliases move
 * to newer models). Gemini 1.x and 2.x never required them, so they are left alone.
 */
export function checksCallSignatures(model: string): boolean {
  return !/^(?:models\/)?gemini-[12](?:[.-]|$)/.test(model);
}
