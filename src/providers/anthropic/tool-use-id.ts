import { createHash } from 'node:crypto';

const CLAUDE_TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * A call id as Claude takes it on `tool_use` and `tool_result`: letters,
 * digits, `_` and `-` only. Ids other upstreams made (Kimi's
 * `functions.get_weather:0`, a routed alias's previous deployment) are made
 * safe with a hash of the whole, the same every time, so a call and its
 * result still pair up and a resent history reads the same (prompt cache).
 */
export function claudeToolUseId(callId: string): string {
  if (CLAUDE_TOOL_USE_ID.test(callId)) return callId;
  const hash = createHash('sha256').update(callId).digest('hex').slice(0, 8);
  return `${callId.replace(/[^a-zA-Z0-9_-]/g, '_')}_${hash}`;
}
