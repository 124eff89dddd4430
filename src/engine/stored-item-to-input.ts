import type { InputItem } from '../protocol/input-items.ts';
import type { StoredItem } from '../store/response-store.ts';
import { qualifiedToolName } from '../executors/mcp/mcp-executor.ts';
import { modelToolName, TOOL_SEARCH_NAME } from './declared-tools.ts';

/**
 * Reads a stored item — an earlier request's input or an earlier response's
 * output — back as the input items the model is given its history in. MCP
 * items become the function call and output the model made and saw; listings
 * and approval bookkeeping are not for the model.
 */
export function storedItemToInput(item: StoredItem | InputItem): InputItem[] {
  switch (item.type) {
    case 'message':
      if (item.role !== 'assistant') return [item];
      return [
        {
          ...(item.id != null && { id: item.id }),
          type: 'message',
          role: 'assistant',
          content:
            typeof item.content === 'string'
              ? item.content
              : item.content.map((part) => (part.type === 'output_text' ? { type: 'output_text' as const, text: part.text } : { type: 'refusal' as const, refusal: part.refusal })),
          ...(item.phase !== undefined && { phase: item.phase }),
        },
      ];
    case 'function_call':
      // The model knows a namespaced function by the flat name it was offered.
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call', call_id: item.call_id, name: modelToolName({ name: item.name, ...(item.namespace && { namespace: item.namespace }) }), arguments: item.arguments }];
    case 'function_call_output':
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call_output', call_id: item.call_id, output: item.output as Extract<InputItem, { type: 'function_call_output' }>['output'] }];
    // A freeform tool is a function with one string parameter for the model.
    case 'custom_tool_call':
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call', call_id: item.call_id, name: modelToolName({ name: item.name, ...(item.namespace && { namespace: item.namespace }) }), arguments: JSON.stringify({ input: item.input }) }];
    case 'custom_tool_call_output':
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call_output', call_id: item.call_id, output: item.output }];
    // A client-run tool search is a function call for the model; its output names what it loaded.
    case 'tool_search_call':
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call', call_id: item.call_id ?? item.id ?? 'tool_search', name: TOOL_SEARCH_NAME, arguments: JSON.stringify(item.arguments ?? {}) }];
    case 'tool_search_output':
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call_output', call_id: item.call_id ?? 'tool_search', output: JSON.stringify({ loaded: item.tools.map((tool) => (tool as { name?: string }).name ?? tool.type) }) }];
    case 'reasoning':
      return [{ ...(item.id != null && { id: item.id }), type: 'reasoning', summary: item.summary, ...(item.encrypted_content != null && { encrypted_content: item.encrypted_content }) }];
    case 'mcp_call': {
      const name = qualifiedToolName(item.server_label, item.name);
      const output = item.error ? JSON.stringify({ error: item.error }) : (item.output ?? '');
      return [
        { type: 'function_call', call_id: item.id, name, arguments: item.arguments },
        { type: 'function_call_output', call_id: item.id, output },
      ];
    }
    case 'mcp_list_tools':
    case 'mcp_approval_request':
    case 'mcp_approval_response':
      return [];
    default:
      return [item];
  }
}
