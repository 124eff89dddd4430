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

/**
 * The `tool_use` ids of one conversation, unique as Claude requires: servers
 * that number calls within each answer (every first call `call_0`) repeat
 * ids across turns, so a later call with an id already used is told apart
 * (`call_0_2`), and a result goes to the earliest call of its id not yet
 * answered — the same names every time the same history is sent.
 */
export class ToolUseIds {
  readonly #uses = new Map<string, number>();
  /** By call id: the names given to its calls that no result has answered yet, oldest first. */
  readonly #open = new Map<string, string[]>();

  /** The id of a `tool_use` block. */
  call(callId: string): string {
    const uses = (this.#uses.get(callId) ?? 0) + 1;
    this.#uses.set(callId, uses);
    const safe = claudeToolUseId(callId);
    const name = uses === 1 ? safe : `${safe}_${uses}`;
    const open = this.#open.get(callId);
    if (open) open.push(name);
    else this.#open.set(callId, [name]);
    return name;
  }

  /** The `tool_use_id` of a result: its call's (a result whose call is not in the history keeps its own id, made safe). */
  result(callId: string): string {
    const uses = this.#uses.get(callId) ?? 0;
    const latest = uses <= 1 ? claudeToolUseId(callId) : `${claudeToolUseId(callId)}_${uses}`;
    return this.#open.get(callId)?.shift() ?? latest;
  }
}
