import type { OutputItem } from '../protocol/output-items.ts';
import type { ConversationTurn, StoredInputItem } from '../store/response-store.ts';
import { CLIENT_ANSWER_TYPES, CLIENT_CALL_TYPES } from './client-call-kinds.ts';

/** What the model produced in a turn (as a client resends it). */
const MODEL_ITEMS = new Set<string>([...CLIENT_CALL_TYPES, 'mcp_approval_request', 'mcp_list_tools', 'mcp_call', 'reasoning']);
/** What answers a turn's calls. */
const ANSWERS = new Set<string>([...CLIENT_ANSWER_TYPES, 'mcp_approval_response']);

/**
 * The paused turn a stateless request continues: clients that keep the
 * conversation themselves (the Agents SDK, the AI SDK, Codex) resend the
 * model's last turn and then their answers — `[user, function_call…,
 * function_call_output…]` or `[user, mcp_list_tools, mcp_approval_request,
 * mcp_approval_response]` — instead of naming it with `previous_response_id`.
 * That last turn is read as the response being continued, so the same rules
 * apply either way. Null when the input does not end with answers to calls
 * it carries.
 */
export function openTurnOf(input: readonly StoredInputItem[]): ConversationTurn | null {
  let end = input.length;
  while (end > 0 && ANSWERS.has(input[end - 1]!.type)) end--;
  if (end === input.length) return null;
  let start = end;
  while (start > 0 && (MODEL_ITEMS.has(input[start - 1]!.type) || isAssistantMessage(input[start - 1]!))) start--;
  const output = input.slice(start, end) as unknown as OutputItem[];
  if (!output.some((item) => CLIENT_CALL_TYPES.has(item.type) || item.type === 'mcp_approval_request')) return null;
  return { responseId: '(resent in the input)', status: 'requires_action', inputItems: [], output };
}

function isAssistantMessage(item: StoredInputItem): boolean {
  return item.type === 'message' && item.role === 'assistant';
}
