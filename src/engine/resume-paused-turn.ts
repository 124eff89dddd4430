import { invalidRequest } from '../errors/gateway-error.ts';
import type { ExecutorRegistry } from '../executors/executor-registry.ts';
import { qualifiedToolName } from '../executors/mcp/mcp-executor.ts';
import type { ToolCall, ToolContext } from '../executors/tool-executor.ts';
import type { McpApprovalRequestItem } from '../protocol/output-items.ts';
import type { ConversationTurn, StoredInputItem } from '../store/response-store.ts';
import { modelCallOf, modelOutputOf } from './client-call-kinds.ts';
import { argumentsProblem, planToolCalls, type PlannedCall, type ToolPolicy } from './plan-tool-calls.ts';

/** What the gateway owes a paused turn before the model can be called again. */
export interface ResumePlan {
  /** Calls of the paused turn the gateway runs (or rejects) now, so every call has an output. */
  calls: PlannedCall[];
  /** Calls closed without running, because the client continued without answering any of them. */
  closed: ToolCall[];
  /**
   * Ids of the paused turn's calls whose outputs are already in the history
   * (the MCP calls run before it paused, the client's answered calls), when
   * approved calls of that same turn run now: the model is shown them as one
   * turn (ModelTranscript).
   */
  joining: ReadonlySet<string>;
}

/** The output given to calls the conversation moved on from. */
export const NOT_RUN_MESSAGE = 'This call was not run: the conversation continued without its result.';

/**
 * Continuing a `requires_action` response: the client answers its own calls
 * with `function_call_output` items and each `mcp_approval_request` with an
 * `mcp_approval_response`; the gateway runs the paused turn's server-side
 * calls and the approved MCP calls (a refusal becomes the call's error).
 * Answering only part is a 400 naming what is missing; answering nothing
 * moves on (seed 004's last edge case) with the unanswered calls closed so
 * that every upstream accepts the history. Approving something that is not
 * pending is a 400.
 */
export function planResume(previous: ConversationTurn | null, input: readonly StoredInputItem[], registry: ExecutorRegistry, context: ToolContext, policy: ToolPolicy): ResumePlan | null {
  // A new conversation that answers no approval has nothing to resume (approval answers are still checked below).
  if (!previous && !input.some((item) => item.type === 'mcp_approval_response')) return null;
  const approvals = input.flatMap((item, index) => (item.type === 'mcp_approval_response' ? [{ item, index }] : []));
  const pendingApprovals = previous?.status === 'requires_action' ? unansweredApprovals(previous) : new Map<string, McpApprovalRequestItem>();
  const answeredBy = new Map<string, number>();
  for (const { item, index } of approvals) {
    if (!pendingApprovals.has(item.approval_request_id)) {
      throw invalidRequest(`There is no pending approval request '${item.approval_request_id}' (unknown, or already answered).`, `input[${index}].approval_request_id`, 'unknown_approval_request');
    }
    // Each answer would run (or refuse) the call once more: one request, one answer.
    const first = answeredBy.get(item.approval_request_id);
    if (first !== undefined) {
      throw invalidRequest(`Approval request '${item.approval_request_id}' is answered twice, by input[${first}] and input[${index}]; answer each request once.`, `input[${index}].approval_request_id`, 'duplicate_approval_response');
    }
    answeredBy.set(item.approval_request_id, index);
  }
  // A paused response may report `completed` (loop.pausedStatus, or no server-side tools at all, as OpenAI does): what marks it is calls left without output.
  if (!previous || (previous.status !== 'requires_action' && previous.status !== 'completed')) return null;

  const answeredInPrevious = new Set(previous.output.flatMap((item) => modelOutputOf(item)?.callId ?? []));
  const paused: ToolCall[] = previous.output.flatMap((item) => {
    const call = modelCallOf(item);
    return call && !answeredInPrevious.has(call.callId) ? [call] : [];
  });
  const answered = new Set(input.flatMap((item) => modelOutputOf(item)?.callId ?? []));
  const unanswered = paused.filter((call) => !answered.has(call.callId));
  if (approvals.length === 0 && unanswered.length === paused.length) return paused.length > 0 ? { calls: [], closed: paused, joining: NOTHING_JOINS } : null;

  const missingApproval = [...pendingApprovals.keys()].find((id) => !approvals.some(({ item }) => item.approval_request_id === id));
  if (missingApproval) throw invalidRequest(`No mcp_approval_response was given for approval request '${missingApproval}'; answer every approval request of that turn.`, 'input', 'missing_approval_response');

  // Whether the client sends its tools again or not: a call the gateway cannot run is the client's to answer.
  const missingClientCall = unanswered.find((call) => !runsOnServer(call, registry, context));
  if (missingClientCall) {
    throw invalidRequest(
      `No function_call_output was given for call_id '${missingClientCall.callId}' (${missingClientCall.name}) of the paused response; answer every client call of that turn.`,
      'input',
      'missing_function_call_output',
    );
  }
  const planned = planToolCalls(unanswered, registry, context, policy).map(notAskedFor);
  const approved = approvals.map(({ item, index }) => planApproval(item, index, pendingApprovals.get(item.approval_request_id)!, registry, context, policy));
  // Every call answered by the client: nothing for the gateway to run before the model's next turn.
  if (planned.length === 0 && approved.length === 0) return null;
  const joining = approved.length === 0 ? NOTHING_JOINS : new Set([...ranBeforePause(previous), ...paused.flatMap((call) => (answered.has(call.callId) ? [call.callId] : []))]);
  return { calls: [...planned, ...approved], closed: [], joining };
}

const NOTHING_JOINS: ReadonlySet<string> = new Set();

/**
 * The calls the paused turn ran before it asked for approval: its last items
 * before the approval requests, the server-run calls' results (the loop runs
 * them, then asks). A turn of calls alone that came just before, with no
 * reasoning or text of the model's between, cannot be told from it and is
 * taken with it (a reasoning model's turn begins with its reasoning).
 */
function ranBeforePause(previous: ConversationTurn): string[] {
  const ids: string[] = [];
  for (let index = previous.output.length - 1; index >= 0; index--) {
    const item = previous.output[index]!;
    if (item.type === 'mcp_approval_request') continue;
    const id = item.type === 'mcp_call' ? item.id : modelOutputOf(item)?.callId;
    if (id === undefined) break;
    ids.push(id);
  }
  return ids;
}

/**
 * A paused call, shown as a `function_call`, whose tool now needs approval
 * nobody asked for (the operator gated it meanwhile, or a client resent such
 * a call itself): it is not run, and its `function_call_output` says why.
 */
function notAskedFor(planned: PlannedCall): PlannedCall {
  if (planned.route !== 'approval') return planned;
  return { call: planned.call, route: 'rejected', error: `This call was not run: '${planned.call.name}' needs the user's approval, and none was asked for.`, presentation: { kind: 'function' } };
}

function unansweredApprovals(turn: ConversationTurn): Map<string, McpApprovalRequestItem> {
  const answered = new Set(turn.output.flatMap((item) => (item.type === 'mcp_call' && item.approval_request_id ? [item.approval_request_id] : [])));
  return new Map(turn.output.flatMap((item) => (item.type === 'mcp_approval_request' && !answered.has(item.id) ? [[item.id, item] as const] : [])));
}

function runsOnServer(call: ToolCall, registry: ExecutorRegistry, context: ToolContext): boolean {
  const executor = registry.route(call, context);
  return executor !== null && executor.runsOnClient !== true;
}

function planApproval(
  response: Extract<StoredInputItem, { type: 'mcp_approval_response' }>,
  index: number,
  request: McpApprovalRequestItem,
  registry: ExecutorRegistry,
  context: ToolContext,
  policy: ToolPolicy,
): PlannedCall {
  const call: ToolCall = { callId: request.id, name: qualifiedToolName(request.server_label, request.name), arguments: request.arguments };
  // Shown as the MCP call it was asked for, whether or not its server is offered in this request.
  const presentation = { kind: 'mcp', serverLabel: request.server_label, toolName: request.name, requiresApproval: true } as const;
  if (!response.approve) {
    const reason = response.reason ? `: ${response.reason}` : '.';
    return { call, route: 'rejected', error: `The user did not approve this call${reason}`, approvalRequestId: request.id, presentation };
  }
  // The operator's servers are offered to every request; a server the request named must be named again.
  if (!servesServer(context, call.name, request.server_label) && !context.mcpServers.some(({ tool }) => tool.server_label === request.server_label)) {
    // A tool the tenant's policy denies is offered to no request of its: that is why, not that its server is not named or not answering.
    // Judged by its own name (the model's is hashed when long or odd), as the policy judges every MCP tool.
    const refused = registry.refusal({ ...call, name: `${request.server_label}__${request.name}` }, context);
    if (refused) return { call, route: 'rejected', error: refused, approvalRequestId: request.id, presentation };
    throw invalidRequest(
      `The approved call '${request.name}' runs on the MCP server '${request.server_label}', which this request does not name: include it in tools again ({"type": "mcp", "server_label": "${request.server_label}", "server_url": …}). (If it is one of the gateway's own servers, that server is not answering right now: try again later, or deny the call.)`,
      `input[${index}]`,
      'mcp_server_not_named',
    );
  }
  const [planned] = planToolCalls([call], registry, context, { ...policy, approved: new Set([call.callId]) });
  if (planned!.route === 'server') return { ...planned!, approvalRequestId: request.id };
  // The client sees this error on its mcp_call: in its own names, never the model's `server__tool`.
  const problem = argumentsProblem(request.arguments);
  const error =
    registry.refusal(call, context) ??
    (problem
      ? `The arguments of the approved call '${request.name}' ${problem}.`
      : `The tool '${request.name}' of the MCP server '${request.server_label}' is not available in this request (the server no longer lists it, or allowed_tools leaves it out).`);
  return { call, route: 'rejected', error, approvalRequestId: request.id, presentation };
}

/** Whether `name` is offered in this request as a tool of the MCP server `serverLabel`. */
function servesServer(context: ToolContext, name: string, serverLabel: string): boolean {
  const presentation = context.offered.get(name)?.presentation;
  return presentation?.kind === 'mcp' && presentation.serverLabel === serverLabel;
}
