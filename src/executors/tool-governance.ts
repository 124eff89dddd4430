import type { OfferedTool, ToolCall, ToolContext } from './tool-executor.ts';

/**
 * The check before every tool execution (seed 000's `pre_execute_check`):
 * what a request's tenant may use. The executor registry consults it
 * wherever tools are offered or calls are planned — new turns, resumed
 * paused turns and approved MCP calls alike — so no path runs a tool past it.
 */
export interface ToolGovernance {
  /**
   * Refuses, with a `GatewayError`, a request naming something the tenant may
   * not use (an MCP server URL); runs before any executor connects anywhere.
   */
  checkRequest(context: ToolContext): void;
  /** Whether the tenant is offered this tool at all: the model is not shown tools it may not run. */
  offers(tool: OfferedTool, tenant: string): boolean;
  /** Why this call may not run for the request's tenant, in words the model sees; null when it may. */
  check(call: ToolCall, context: ToolContext): string | null;
}

/** No governance: everything the executors offer may run (a gateway without tenant policies). */
export const UNGOVERNED: ToolGovernance = Object.freeze({
  checkRequest: () => {},
  offers: () => true,
  check: () => null,
});
