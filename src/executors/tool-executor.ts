import type { FunctionToolParam } from '../protocol/create-response-request.ts';

/** A model's request to run a tool. */
export interface ToolCall {
  callId: string;
  name: string;
  /** The arguments exactly as the model produced them (a JSON string). */
  arguments: string;
}

/**
 * What running a tool produced. A failure is a result too (`isError`): the
 * model sees it and decides what to do; only the loop decides to stop.
 */
export interface ToolResult {
  output: string;
  isError: boolean;
}

/** What an executor may know about the request a call belongs to. */
export interface ToolContext {
  tenant: string;
  /** The function tools the request declared. */
  tools: readonly FunctionToolParam[];
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
   * Runs one call. Must honour `signal` (the request was cancelled or timed
   * out) and should resolve with an error result rather than reject; a
   * rejection is turned into one.
   */
  execute(call: ToolCall, context: ToolContext, signal: AbortSignal): Promise<ToolResult>;
}
