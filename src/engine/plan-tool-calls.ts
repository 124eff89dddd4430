import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { CallPresentation, ToolCall, ToolContext, ToolExecutor } from '../executors/tool-executor.ts';
import { jsonTextTooDeep } from '../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';

/** What the loop does with one call the model made. */
export type PlannedCall =
  | { call: ToolCall; route: 'server'; executor: ToolExecutor; approvalRequestId?: string }
  | { call: ToolCall; route: 'client' }
  /** An MCP call the client must approve first: the response pauses with an `mcp_approval_request`. */
  | { call: ToolCall; route: 'approval' }
  /**
   * Never executed: the model sees `error` as the call's output. `presentation`
   * says how the client sees it when its tool is not offered in this request
   * (an approved MCP call whose tool is gone is still an `mcp_call`).
   */
  | { call: ToolCall; route: 'rejected'; error: string; approvalRequestId?: string; presentation?: CallPresentation };

export interface ToolPolicy {
  /** Tool names `tool_choice.allowed_tools` permits; null when every declared tool is allowed. */
  allowed: ReadonlySet<string> | null;
  /** Calls the client already approved (resuming an approval), by call id. */
  approved?: ReadonlySet<string>;
}

/**
 * Applies the request's tool policy to the calls of one turn and routes the
 * rest: `allowed_tools` is a hard limit, a tool nobody can run is an error, a
 * server-run call the tenant's governance refuses is an error (every path to
 * an execution plans here, so this is the check before each one), and
 * server-run calls need arguments that parse as a JSON object no deeper than
 * a request may nest (executors serialise them again).
 */
export function planToolCalls(calls: readonly ToolCall[], registry: ExecutorRegistry, context: ToolContext, policy: ToolPolicy): PlannedCall[] {
  return calls.map((call): PlannedCall => {
    if (policy.allowed && !policy.allowed.has(call.name)) {
      return { call, route: 'rejected', error: `The tool '${call.name}' is not among the allowed tools for this request.` };
    }
    const executor = registry.route(call, context);
    // A tool the tenant may not run is not offered either: a call to it is told why rather than that it does not exist.
    if (!executor) return { call, route: 'rejected', error: registry.refusal(call, context) ?? `There is no tool named '${call.name}'.` };
    if (executor.runsOnClient) return { call, route: 'client' };
    // Before approval, too: nobody is asked to approve what may not run.
    const refusal = registry.refusal(call, context);
    if (refusal) return { call, route: 'rejected', error: refusal };
    const presentation = context.offered.get(call.name)?.presentation;
    if (presentation?.kind === 'mcp' && presentation.requiresApproval && !policy.approved?.has(call.callId)) return { call, route: 'approval' };
    const problem = argumentsProblem(call.arguments);
    if (problem) return { call, route: 'rejected', error: `The arguments for '${call.name}' ${problem}: ${truncate(call.arguments)}` };
    return { call, route: 'server', executor };
  });
}

/** The output a call gets when it failed or was never run: a JSON object with an `error`. */
export function errorOutput(message: string): string {
  return JSON.stringify({ error: message });
}

/** Why a server-run call's arguments cannot be used, in words that follow "The arguments …", or null when they can. */
export function argumentsProblem(text: string): string | null {
  if (jsonTextTooDeep(text, REQUEST_LIMITS.maxJsonDepth)) return `nest objects and arrays more than ${REQUEST_LIMITS.maxJsonDepth} levels deep`;
  try {
    const value: unknown = JSON.parse(text || '{}');
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? null : 'are not a valid JSON object';
  } catch {
    return 'are not a valid JSON object';
  }
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
