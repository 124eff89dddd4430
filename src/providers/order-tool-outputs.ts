import type { InputItem } from '../protocol/input-items.ts';

/**
 * Moves every `function_call_output` to follow the calls it answers, keeping
 * all other items in order. Upstreams demand it (Chat Completions: tool
 * messages right after the assistant message with the calls; Anthropic: the
 * next user turn starts with the tool results), while a conversation may have
 * a user message between a call and its output (a client that continued a
 * paused response with new text, then the gateway closed the calls).
 */
export function orderToolOutputs(items: readonly InputItem[]): InputItem[] {
  // Most conversations carry no tool output: nothing to move.
  if (!items.some((item) => item.type === 'function_call_output')) return [...items];
  const callsAt = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.type === 'function_call') callsAt.set(item.call_id, index);
  });
  const outputsFor = new Map<number, InputItem[]>();
  const rest: { item: InputItem; index: number }[] = [];
  items.forEach((item, index) => {
    const callIndex = item.type === 'function_call_output' ? callsAt.get(item.call_id) : undefined;
    if (callIndex === undefined || callIndex > index) {
      rest.push({ item, index });
      return;
    }
    // Attach to the last call of the contiguous block of calls that holds this one.
    let anchor = callIndex;
    while (items[anchor + 1]?.type === 'function_call') anchor++;
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
