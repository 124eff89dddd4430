import type { AnthropicBlock } from './convert-to-anthropic-request.ts';

/**
 * Claude's thinking must go back upstream exactly as it came: the text with
 * its signature, or redacted thinking's data. Both travel in the reasoning
 * item's `encrypted_content`, prefixed so other providers' values are
 * recognised as foreign and left out.
 */
const THINKING = 'anthropic.thinking.v1:';
const REDACTED = 'anthropic.redacted.v1:';

export function encodeThinking(thinking: string, signature: string): string {
  return THINKING + Buffer.from(JSON.stringify({ thinking, signature }), 'utf8').toString('base64');
}

export function encodeRedactedThinking(data: string): string {
  return REDACTED + data;
}

export function decodeReasoning(value: string): Extract<AnthropicBlock, { type: 'thinking' | 'redacted_thinking' }> | null {
  if (value.startsWith(REDACTED)) return { type: 'redacted_thinking', data: value.slice(REDACTED.length) };
  if (!value.startsWith(THINKING)) return null;
  try {
    const { thinking, signature } = JSON.parse(Buffer.from(value.slice(THINKING.length), 'base64').toString('utf8')) as { thinking: string; signature: string };
    return typeof thinking === 'string' && typeof signature === 'string' ? { type: 'thinking', thinking, signature } : null;
  } catch {
    return null;
  }
}
