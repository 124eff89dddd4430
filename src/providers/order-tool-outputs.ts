import type { InputItem } from '../protocol/input-items.ts';

/**
 * Moves every `function_call_output` to follow the model turn that made its
 * call, keeping all other items in order. Upstreams demand it (Chat
 * Completions: tool messages right after the assistant message with the
 * calls; Anthropic: the next user turn starts with the tool results, and with
 * thinking on, the turn before them starts with its thinking block, so one
 * turn's calls must not be split in two), while a conversation may have a
 * user message between a call and its output (a client that continued a
 * paused response with new text, then the gateway closed the calls), or text
 * between one turn's calls (Claude writes some before each).
 */
export function orderToolOutputs(items: readonly InputItem[]): InputItem[] {
  // Most conversations carry no tool output: nothing to move.
  if (!items.some((item) => item.type === 'function_call_output')) return [...items];
  const callsAt = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.type === 'function_call') callsAt.set(item.call_id, index);
  });
  const turnEnds = new Map<number, number>();
  const outputsFor = new Map<number, InputItem[]>();
  const rest: { item: InputItem; index: number }[] = [];
  items.forEach((item, index) => {
    const callIndex = item.type === 'function_call_output' ? callsAt.get(item.call_id) : undefined;
    if (callIndex === undefined || callIndex > index) {
      rest.push({ item, index });
      return;
    }
    let anchor = turnEnds.get(callIndex);
    if (anchor === undefined) turnEnds.set(callIndex, (anchor = turnEnd(items, callIndex)));
    const list = outputsFor.get(anchor) ?? [];
    list.push(item);
    outputsFor.set(anchor, list);
  });
  const ordered: InputItem[] = [];
  for (const { item, index } of rest) {
    ordered.push(item);
    const outputs = outputsFor.get(index);
    if (outputs) ordered.push(...outputs);
  }
  return ordered;
}

/**
 * The last call of the turn that holds the call at `callIndex`: the calls
 * right after it, and those after assistant text (one turn's calls with text
 * between them). Anything else ends it, and so does assistant text no call
 * follows: the outputs go before it (an assistant message after a turn's
 * calls and before their outputs, a conversation's item added by hand, is
 * one Chat Completions refuses). An output already right after its call
 * stays there: the next call may be a later turn's, and moving the output
 * would also change a history whose prefix the upstream has cached.
 */
function turnEnd(items: readonly InputItem[], callIndex: number): number {
  let end = callIndex;
  for (let next = callIndex + 1; next < items.length; next++) {
    const item = items[next]!;
    if (item.type === 'function_call') end = next;
    else if (!(item.type === 'message' && item.role === 'assistant')) break;
  }
  return end;
}
