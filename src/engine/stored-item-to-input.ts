import type { InputItem } from '../protocol/input-items.ts';
import type { StoredItem } from '../store/response-store.ts';
import { qualifiedToolName } from '../executors/mcp/mcp-executor.ts';
import { newId } from '../util/ids.ts';
import { modelCallOf, modelOutputOf } from './client-call-kinds.ts';
import type { OutputTextAnnotations } from '../protocol/input-items.ts';

/**
 * What the model is shown for an MCP call with neither output nor error: one
 * sent back without its result that no stored response holds (the Agents SDK
 * resends the gateway's calls so, and with `store: false` nothing keeps
 * them), or one cut off before it finished. An empty result would read as
 * the tool having returned nothing, and a model may call a tool with side
 * effects again.
 */
export const RESULT_NOT_AVAILABLE = 'The result of this call is not available (it was sent back without its output, or the call never finished).';

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
              : item.content.map((part) =>
                  // Citations stay with their text: an upstream that gave them may be shown them again.
                  part.type === 'output_text' ? { type: 'output_text' as const, text: part.text, ...(part.annotations?.length && { annotations: part.annotations as OutputTextAnnotations }) } : { type: 'refusal' as const, refusal: part.refusal },
                ),
          ...(item.phase != null && { phase: item.phase }),
        },
      ];
    // Calls the client answers, and their answers, as the model made and saw them (client-call-kinds.ts).
    case 'function_call':
    case 'custom_tool_call':
    case 'tool_search_call': {
      const call = modelCallOf(item)!;
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call', call_id: call.callId, name: call.name, arguments: call.arguments }];
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'tool_search_output': {
      const answer = modelOutputOf(item)!;
      return [{ ...(item.id != null && { id: item.id }), type: 'function_call_output', call_id: answer.callId, output: answer.output }];
    }
    case 'reasoning':
      // Its text too: a Chat server's reasoning (DeepSeek's) goes back with its turn; other upstreams read only what is sealed.
      return [{ ...(item.id != null && { id: item.id }), type: 'reasoning', summary: item.summary, ...(item.content?.length && { content: item.content }), ...(item.encrypted_content != null && { encrypted_content: item.encrypted_content }) }];
    case 'mcp_call': {
      const name = qualifiedToolName(item.server_label, item.name);
      const text = item.error ? JSON.stringify({ error: item.error }) : (item.output ?? RESULT_NOT_AVAILABLE);
      // Images the tool answered with follow the text, as in a function_call_output.
      const images = item['loopgate:images'] ?? [];
      const output = images.length > 0 ? [{ type: 'input_text' as const, text }, ...images] : text;
      // Stored calls always have their id; one the client sent without (ids are optional in input) pairs with its own output all the same.
      const callId = item.id ?? newId('mcp');
      return [
        { type: 'function_call', call_id: callId, name, arguments: item.arguments },
        { type: 'function_call_output', call_id: callId, output },
      ];
    }
    case 'mcp_list_tools':
    case 'mcp_approval_request':
    case 'mcp_approval_response':
    // A request to compact, not something said: the response it asked for holds the result.
    case 'compaction_trigger':
      return [];
    default:
      return [item];
  }
}
