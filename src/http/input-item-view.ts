import type { StoredInputItem } from '../store/response-store.ts';

/**
 * An input item as `GET /v1/responses/{id}/input_items` lists it: the item
 * shapes of `ResponseResource.output` (content always an array of parts,
 * a status on every item).
 */
export function inputItemView(item: StoredInputItem): Record<string, unknown> {
  switch (item.type) {
    case 'message': {
      const content =
        typeof item.content !== 'string'
          ? item.content.map(partView)
          : item.role === 'assistant'
            ? [{ type: 'output_text', text: item.content, annotations: [] }]
            : [{ type: 'input_text', text: item.content }];
      return { id: item.id, type: 'message', role: item.role, status: item.status ?? 'completed', content, ...('phase' in item && item.phase !== undefined && { phase: item.phase }) };
    }
    case 'function_call':
    case 'function_call_output':
      return { ...item, status: item.status ?? 'completed' };
    case 'reasoning':
      return { id: item.id, type: 'reasoning', summary: item.summary, ...(item.encrypted_content != null && { encrypted_content: item.encrypted_content }) };
    default:
      return { ...item };
  }
}

type MessagePart = Exclude<Extract<StoredInputItem, { type: 'message' }>['content'], string>[number];

function partView(part: MessagePart): Record<string, unknown> {
  switch (part.type) {
    case 'output_text':
      return { type: 'output_text', text: part.text, annotations: part.annotations ?? [] };
    case 'input_image':
      return { type: 'input_image', image_url: part.image_url ?? null, detail: part.detail ?? 'auto' };
    default:
      return part;
  }
}
