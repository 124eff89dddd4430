import type { OutputItem } from '../protocol/output-items.ts';
import type { ConversationTurn, StoredInputItem, StoredItem } from '../store/response-store.ts';
import { CLIENT_ANSWER_TYPES, CLIENT_CALL_TYPES, isUnfinishedCall, modelCallOf, modelOutputOf } from './client-call-kinds.ts';

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
  if (end === input.length) return movedOnTurnOf(input);
  // The AI SDK answers each approval right after the request it references — [mcpr_1, answer_1, mcpr_2, answer_2] —
  // so approvals answered before the last request are of the same turn too.
  let start = modelItemsBefore(input, end);
  while (start > 0 && input[start - 1]!.type === 'mcp_approval_response') {
    let answers = start;
    while (answers > 0 && input[answers - 1]!.type === 'mcp_approval_response') answers--;
    const requests = modelItemsBefore(input, answers);
    // Answers the model's items do not come before are not this turn's.
    if (requests === answers) break;
    start = requests;
  }
  return turnOf(input.slice(start, end).filter((item) => !ANSWERS.has(item.type)), '(resent in the input)');
}

/**
 * A resent turn whose calls the client left unanswered and went on past
 * with a new message — `[user, function_call, user]`, the stateless form of
 * continuing a paused response with new text: that turn is the one
 * continued, so its calls are closed as they are for `previous_response_id`
 * (no upstream takes a call without its result). Null when the input does
 * not end so, or any of the turn's calls has an answer.
 */
function movedOnTurnOf(input: readonly StoredInputItem[]): ConversationTurn | null {
  let end = input.length;
  while (end > 0 && isNewMessage(input[end - 1]!)) end--;
  if (end === input.length || end === 0) return null;
  const turn = pausedTurnEndingAt(input, end, '(resent in the input)');
  if (!turn) return null;
  const answered = new Set(input.flatMap((item) => modelOutputOf(item)?.callId ?? []));
  return turn.output.some((item) => answered.has(modelCallOf(item)?.callId ?? '')) ? null : turn;
}

function isNewMessage(item: StoredInputItem): boolean {
  return item.type === 'message' && item.role !== 'assistant';
}

/**
 * The turn a conversation (`conversation` on a request) paused on: its last
 * items, when the model made them and they hold calls or approval requests
 * nobody answered yet. The next response in the conversation continues it,
 * as one naming it by `previous_response_id` would: its answers are checked
 * against it, approved MCP calls run, and calls it leaves unanswered are
 * closed.
 */
export function pausedTurnOf(conversationItems: readonly StoredItem[]): ConversationTurn | null {
  return pausedTurnEndingAt(conversationItems as readonly StoredInputItem[], conversationItems.length, '(the conversation\'s last turn)');
}

/** The model's items just before `end`, as a paused turn, when they hold a call or an approval request. */
function pausedTurnEndingAt(items: readonly StoredInputItem[], end: number, responseId: string): ConversationTurn | null {
  return turnOf(items.slice(modelItemsBefore(items, end), end), responseId);
}

/** Where the run of the model's items that ends at `end` starts. */
function modelItemsBefore(items: readonly StoredInputItem[], end: number): number {
  let start = end;
  while (start > 0 && (MODEL_ITEMS.has(items[start - 1]!.type) || isAssistantMessage(items[start - 1]!))) start--;
  return start;
}

function turnOf(items: readonly StoredInputItem[], responseId: string): ConversationTurn | null {
  // A call the model never finished is not waiting on anyone: the model's history leaves it out (conversation.ts).
  const output = (items.some(isUnfinishedCall) ? items.filter((item) => !isUnfinishedCall(item)) : items) as unknown as OutputItem[];
  if (!output.some((item) => CLIENT_CALL_TYPES.has(item.type) || item.type === 'mcp_approval_request')) return null;
  return { responseId, status: 'requires_action', inputItems: [], output };
}

function isAssistantMessage(item: StoredInputItem): boolean {
  return item.type === 'message' && item.role === 'assistant';
}
