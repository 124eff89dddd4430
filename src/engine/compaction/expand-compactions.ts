import { invalidRequest } from '../../errors/gateway-error.ts';
import type { InputItem } from '../../protocol/input-items.ts';
import type { StoredInputItem } from '../../store/response-store.ts';
import { unansweredUnfinishedCalls } from '../client-call-kinds.ts';
import { storedItemToInput } from '../stored-item-to-input.ts';
import type { CompactionCodec } from './compaction-codec.ts';
import { summaryMessageText } from './compaction-prompt.ts';

/** Who may open compaction items here: the gateway's codec (null: compaction is off) and the request's tenant. */
export interface CompactionScope {
  codec: CompactionCodec | null;
  tenant: string;
}

/**
 * What the model is given for a conversation: the inherited history, then the
 * request's input, with every compaction item replaced by the summary it
 * carries, as a user message. One item stands for one item, so positions
 * (and `historyLength`) stay as they were. An item that does not open is a
 * 400 `invalid_encrypted_content` before any model call, naming the input
 * item (`input[3].encrypted_content`), or `inherited` for one in the history.
 */
export function modelInputOf(history: readonly InputItem[], input: readonly StoredInputItem[], scope: CompactionScope & { inherited: 'previous_response_id' | 'conversation' }): InputItem[] {
  // A call the model never finished that a stateless client resent unanswered is not shown, as in a stored history (conversation.ts).
  const unfinished = unansweredUnfinishedCalls(input, [history, input]);
  // No compaction item anywhere (the usual case): the items as they are, with no copy made per item.
  if (!history.some(isCompaction) && !input.some(isCompaction)) {
    const items = history.slice();
    for (const item of input) if (!unfinished.has(item)) items.push(...storedItemToInput(item));
    return items;
  }
  return [
    // Named by its id, so the client knows which item of the conversation to remove.
    ...history.map((item) => expandCompaction(item, scope, scope.inherited, `${item.id != null ? `'${item.id}', ` : ''}an earlier turn of this conversation ('${scope.inherited}')`)),
    ...input.flatMap((item, index) => (unfinished.has(item) ? [] : storedItemToInput(expandCompaction(item, scope, `input[${index}].encrypted_content`)))),
  ];
}

/**
 * Refuses, with the 400 a response would get later, a compaction item that
 * does not open for this tenant, as it is added to a conversation (`field`:
 * `items`): kept, it would make every later response of the conversation fail.
 */
export function checkCompactionItems(items: readonly InputItem[], scope: CompactionScope, field: string): void {
  items.forEach((item, index) => void expandCompaction(item, scope, `${field}[${index}].encrypted_content`));
}

function isCompaction(item: { type: string }): boolean {
  return item.type === 'compaction';
}

/** The item itself, or, for a compaction item, the user message holding its summary. */
function expandCompaction<T extends InputItem>(item: T, scope: CompactionScope, param: string, where?: string): T | InputItem {
  if (item.type !== 'compaction') return item;
  if (!scope.codec) throw invalidRequest('Compaction items cannot be read: compaction is not enabled on this gateway.', param, 'unsupported_item');
  const { summary } = scope.codec.open(scope.tenant, item.encrypted_content, param, where);
  return { ...(item.id != null && { id: item.id }), type: 'message', role: 'user', content: summaryMessageText(summary) };
}
