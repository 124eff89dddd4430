import { invalidRequest } from '../errors/gateway-error.ts';
import type { InputItem } from '../protocol/input-items.ts';

/** Items the engine resolves before a model call: none of them is for a provider's wire format. */
export type EngineOnlyItem = Extract<
  InputItem,
  {
    type:
      | 'compaction'
      | 'compaction_trigger'
      | 'item_reference'
      | 'mcp_approval_response'
      | 'mcp_list_tools'
      | 'mcp_call'
      | 'mcp_approval_request'
      | 'custom_tool_call'
      | 'custom_tool_call_output'
      | 'tool_search_call'
      | 'tool_search_output';
  }
>;

const SKIPPED = new Set<string>(['mcp_approval_response', 'mcp_list_tools', 'mcp_call', 'mcp_approval_request', 'custom_tool_call', 'custom_tool_call_output', 'tool_search_call', 'tool_search_output']);

/**
 * Whether a provider converter should pass over `item`: MCP, custom tool and
 * tool search items (the engine turns them into calls and outputs first). A
 * compaction item or an unresolved reference reaching a provider is a bug
 * upstream of it, refused with an error naming `param` rather than dropped.
 */
export function isEngineOnlyItem(item: InputItem, param: string): item is EngineOnlyItem {
  if (item.type === 'compaction') throw invalidRequest('A compaction item reached the provider without being expanded to its summary.', `${param}.type`, 'unsupported_item');
  if (item.type === 'compaction_trigger') throw invalidRequest('A compaction trigger reached the provider: the engine answers it.', `${param}.type`, 'unsupported_item');
  if (item.type === 'item_reference') throw invalidRequest(`Item reference '${item.id}' was not resolved.`, `${param}.id`, 'item_not_found');
  return SKIPPED.has(item.type);
}
