import type { FunctionToolParam } from '../../protocol/create-response-request.ts';
import type { TurnRequest } from '../provider.ts';

/** What one model call may do with tools, read from the request's `tools` and `tool_choice`. */
export interface ToolUsePlan {
  /** The tools described to the model, the only ones it may call; empty: its text is passed on untouched. */
  tools: FunctionToolParam[];
  /** The reply must call a tool: any of them (`required`), or the one named. */
  mustCall: { kind: 'any' } | { kind: 'named'; name: string } | null;
  /** Several calls in one reply are welcome (`parallel_tool_calls` not false). */
  parallel: boolean;
  /** Tools were declared but `tool_choice` rules them out for this reply: the model is told so. */
  forbidden: boolean;
  /**
   * The answer is JSON (`text.format` json_schema or json_object): a reply is
   * calls or the answer, and any prose the model writes beside its calls is
   * its reasoning, never a message `responses.parse()` would read as the answer.
   */
  answersInJson: boolean;
}

/**
 * The text protocol's reading of `tool_choice`: `none` describes no tool
 * (and says so); `allowed_tools` describes only those (as for Claude, which
 * has no native form either); `required` and a named function say a call
 * must come, and a reply without one is retried like a broken call.
 */
export function planToolUse(request: TurnRequest): ToolUsePlan {
  const parallel = request.parallelToolCalls !== false;
  const answersInJson = request.textFormat?.type === 'json_schema' || request.textFormat?.type === 'json_object';
  const none: ToolUsePlan = { tools: [], mustCall: null, parallel, forbidden: request.tools.length > 0, answersInJson };
  const choice = request.toolChoice;
  if (request.tools.length === 0 || choice === 'none') return none;
  if (choice === null || choice === 'auto') return { tools: request.tools, mustCall: null, parallel, forbidden: false, answersInJson };
  if (choice === 'required') return { tools: request.tools, mustCall: { kind: 'any' }, parallel, forbidden: false, answersInJson };
  if (choice.type === 'function') {
    const tools = request.tools.filter((tool) => tool.name === choice.name);
    return tools.length === 0 ? none : { tools, mustCall: { kind: 'named', name: choice.name }, parallel, forbidden: false, answersInJson };
  }
  const allowed = new Set(choice.tools.map((tool) => tool.name));
  const tools = request.tools.filter((tool) => allowed.has(tool.name));
  if (tools.length === 0 || choice.mode === 'none') return none;
  return { tools, mustCall: choice.mode === 'required' ? { kind: 'any' } : null, parallel, forbidden: false, answersInJson };
}
