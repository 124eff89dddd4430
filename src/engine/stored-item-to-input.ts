import type { InputItem } from '../protocol/input-items.ts';
import type { StoredItem } from '../store/response-store.ts';

/**
 * Reads a stored item — an earlier request's input or an earlier response's
 * output — back as an input item, the form the model is given its history in.
 */
export function storedItemToInput(item: StoredItem): InputItem {
  switch (item.type) {
    case 'message':
      if (item.role !== 'assistant') return item;
      return {
        id: item.id,
        type: 'message',
        role: 'assistant',
        content:
          typeof item.content === 'string'
            ? item.content
            : item.content.map((part) => (part.type === 'output_text' ? { type: 'output_text' as const, text: part.text } : { type: 'refusal' as const, refusal: part.refusal })),
        ...(item.phase !== undefined && { phase: item.phase }),
      };
    case 'function_call':
      return { id: item.id, type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      return { id: item.id, type: 'function_call_output', call_id: item.call_id, output: item.output as Extract<InputItem, { type: 'function_call_output' }>['output'] };
    case 'reasoning':
      return { id: item.id, type: 'reasoning', summary: item.summary, ...(item.encrypted_content != null && { encrypted_content: item.encrypted_content }) };
    default:
      return item;
  }
}
