import type { OutputItem } from '../../protocol/output-items.ts';
import type { StoredResponse } from '../../store/response-store.ts';
import { boundError, type InspectorApproval, type InspectorTimeline, type InspectorToolCall } from './inspector-views.ts';

/**
 * A response this replica did not watch (another replica ran it, or it left
 * the recent list), rebuilt from its stored items: its tool calls, their
 * outcome as far as the items tell, and its approval requests. Turns and
 * timings are not stored, so there are none.
 */
export function storedTimeline(record: StoredResponse): InspectorTimeline {
  const { response } = record;
  const toolCalls = toolCallsOf(response.output);
  const usage = response.usage;
  return {
    object: 'loopgate:inspector.timeline',
    source: 'stored',
    response: {
      object: 'loopgate:inspector.response',
      id: response.id,
      tenant: record.tenant,
      model: response.model,
      provider: null,
      background: response.background,
      status: response.status,
      created_at: response.created_at,
      duration_ms: response.completed_at === null ? null : Math.max(0, response.completed_at - response.created_at) * 1000,
      turns: null,
      tool_calls: toolCalls.length,
      failed_tool_calls: toolCalls.filter((call) => call.status === 'failed').length,
      tokens: usage && { input: usage.input_tokens, output: usage.output_tokens, total: usage.total_tokens },
      error: response.error,
      incomplete_reason: response.incomplete_details?.reason ?? null,
    },
    turns: [],
    tool_calls: toolCalls,
    approvals: approvalsOf(response.output),
    left_out: 0,
  };
}

function toolCallsOf(output: readonly OutputItem[]): InspectorToolCall[] {
  const results = new Map<string, string>();
  for (const item of output) if (item.type === 'function_call_output') results.set(item.call_id, typeof item.output === 'string' ? item.output : '');
  const calls: InspectorToolCall[] = [];
  for (const item of output) {
    const call = { turn: null, started_ms: null, duration_ms: null };
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const result = results.get(item.call_id);
      const error = result === undefined ? null : gatewayErrorOf(result);
      // Without an output the call was the client's to run (or never answered).
      calls.push({ ...call, call_id: item.call_id, name: item.name, executor: null, status: result === undefined ? null : error === null ? 'completed' : 'failed', error });
    } else if (item.type === 'mcp_call') {
      const failed = item.error !== undefined;
      calls.push({ ...call, call_id: item.id, name: `${item.server_label}__${item.name}`, executor: 'mcp', status: failed ? 'failed' : item.status === 'completed' ? 'completed' : null, error: failed ? boundError(item.error!) : null });
    }
  }
  return calls;
}

function approvalsOf(output: readonly OutputItem[]): InspectorApproval[] {
  return output.flatMap((item) => (item.type === 'mcp_approval_request' ? [{ turn: null, call_id: item.id, name: `${item.server_label}__${item.name}`, at_ms: null }] : []));
}

/** The gateway's own error outputs read `{"error": "…"}`; a tool's own failure text cannot be told from success once stored. */
function gatewayErrorOf(output: string): string | null {
  if (!output.startsWith('{"error":')) return null;
  try {
    const parsed = JSON.parse(output) as { error?: unknown };
    return typeof parsed.error === 'string' ? boundError(parsed.error) : null;
  } catch {
    return null;
  }
}
