import type { FunctionToolParam, McpToolParam } from '../protocol/create-response-request.ts';
import type { FunctionCallOutputPart } from '../protocol/input-items.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { TraceContext } from '../util/trace-context.ts';
import type { McpToolName } from './allow-deny-list.ts';

/** A model's request to run a tool. */
export interface ToolCall {
  callId: string;
  name: string;
  /** The arguments exactly as the model produced them (a JSON string). */
  arguments: string;
  /** The model marked this call as its last action (see TurnEvent `tool_call.start`). */
  terminal?: boolean;
}

/**
 * What running a tool produced. A failure is a result too (`isError`): the
 * model sees it and decides what to do; only the loop decides to stop.
 */
export interface ToolResult {
  /** The output as text: what logs, traces and items without room for images (`mcp_call`) carry. */
  output: string;
  isError: boolean;
  /** The call was cut off (cancelled, or out of time) before it finished: whether it took effect is unknown. */
  unfinished?: boolean;
  /** Images that go with the output, for a `function_call_output` to hold after its text (a browser tool's screenshot). */
  images?: readonly AttachedImage[];
}

/** An image a tool answered with, as a function output part (a data URL). */
export type AttachedImage = Extract<FunctionCallOutputPart, { type: 'input_image' }>;

/** How an offered tool's calls appear in the output. */
export type CallPresentation =
  /** `function_call` + `function_call_output` items (seed 004). */
  | { kind: 'function' }
  /** OpenAI's MCP items: one `mcp_call`, or an `mcp_approval_request` that pauses the response. */
  | { kind: 'mcp'; serverLabel: string; toolName: string; requiresApproval: boolean };

/** A tool an executor offers the model for one response, beyond the request's own function tools. */
export interface OfferedTool {
  /** What the model is given: a function tool. */
  definition: FunctionToolParam;
  executor: ToolExecutor;
  presentation: CallPresentation;
  /** The executor's own data for running it (for MCP: the server and the tool's real name). */
  target: unknown;
  /** Longest one call of this tool may run; before the executor's own `timeoutMs` and the loop's default. */
  timeoutMs?: number;
  /** The URL of the server the tool runs on (MCP), which tenants' URL policies judge. */
  serverUrl?: string;
  /** The operator's MCP server the tool runs on, by its configured name (metrics label it so); absent for a server a request named. */
  operatorServer?: string;
  /**
   * What tenants' tool rules judge, when it is not the model's name: an MCP
   * tool's server and own name (`<server>__<tool>` in a rule) — the model's
   * name is shortened and hashed when that is over 64 characters or holds
   * characters models refuse, and a rule like `*__delete` must still find it.
   */
  policyName?: McpToolName;
}

/** What `prepare` found: tools to offer, and items that announce them in the output (`mcp_list_tools`). */
export interface PreparedTools {
  offered: OfferedTool[];
  items: OutputItem[];
}

/** What an executor may know about the request a call belongs to. */
export interface ToolContext {
  tenant: string;
  /** The function tools the request declared. */
  tools: readonly FunctionToolParam[];
  /** The MCP servers the request named (`tools: [{type: "mcp", …}]`), with their index in `tools` for error params. */
  mcpServers: readonly { tool: McpToolParam; index: number }[];
  /** Output items of the earlier responses of the conversation (e.g. listings to reuse). */
  previousOutput: readonly OutputItem[];
  /** Tools executors offered for this response, by the name the model calls them. */
  offered: ReadonlyMap<string, OfferedTool>;
  /** In `execute`: the call's own trace context, for executors that pass it on (MCP: `params._meta`); absent while tracing is off. */
  trace?: TraceContext;
}

/**
 * A backend that runs tool calls (seed 004, FR-001..FR-004). Executors are
 * injected when the app is built; a registry routes each call to the first
 * one whose `canExecute` accepts it.
 */
export interface ToolExecutor {
  /** A short name for logs and errors: `mcp`, `sandbox`, … */
  readonly kind: string;
  /**
   * True for the client `function` executor: its calls are not run here, the
   * response pauses with `requires_action` and the client runs them.
   */
  readonly runsOnClient?: boolean;
  /** Longest one call may run before it becomes an error result; the loop's default when absent. */
  readonly timeoutMs?: number;
  canExecute(call: ToolCall, context: ToolContext): boolean;
  /**
   * Called once per response, before the first model call: the tools this
   * executor offers. May reject with a `GatewayError` (for example a refused
   * server URL), which fails the request before it starts.
   */
  prepare?(context: ToolContext, signal: AbortSignal): Promise<PreparedTools>;
  /** Whether `prepare` would offer nothing for this request, known at once (no server configured or named): it is then not called. */
  offersNothing?(context: ToolContext): boolean;
  /**
   * How a call shows that names one of this executor's tools it does not
   * offer this response (the tenant may not run it, or its server has no
   * such tool), or null when the name is not one of its. The call is refused
   * either way; this keeps it in the shape the executor's calls have, so a
   * client never takes it for a call of its own.
   */
  presentationOf?(name: string, context: ToolContext): CallPresentation | null;
  /**
   * Runs one call. Must honour `signal` (the request was cancelled or timed
   * out) and should resolve with an error result rather than reject; a
   * rejection is turned into one.
   */
  execute(call: ToolCall, context: ToolContext, signal: AbortSignal): Promise<ToolResult>;
}
