import { FunctionToolExecutor } from './function-tool-executor.ts';
import { UNGOVERNED, type ToolGovernance } from './tool-governance.ts';
import type { CallPresentation, OfferedTool, PreparedTools, ToolCall, ToolContext, ToolExecutor } from './tool-executor.ts';

const FUNCTION_PRESENTATION: CallPresentation = Object.freeze({ kind: 'function' });

/** Nothing offered, nothing announced: shared, frozen. */
const NOTHING_PREPARED: PreparedTools = Object.freeze({ offered: [], items: [] }) as PreparedTools;

/**
 * Routes each call to the executor that can run it: the server-side
 * executors first, in the order they were registered, then the client
 * `function` executor for tools the request declared. Null means nobody can:
 * the model called a tool that does not exist. Its governance (the tenant's
 * tool policy) is asked wherever tools are offered and before calls run.
 */
export class ExecutorRegistry {
  readonly #serverSide: readonly ToolExecutor[];
  readonly #client = new FunctionToolExecutor();
  readonly #governance: ToolGovernance;

  constructor(serverSide: readonly ToolExecutor[], governance: ToolGovernance = UNGOVERNED) {
    this.#serverSide = serverSide;
    this.#governance = governance;
  }

  /**
   * Whether any server-side executor is available to this request: one that
   * judges calls by name, or one that offered tools for it. Without one the
   * gateway is single-shot: calls go back to the client as they are (SC-008).
   */
  serverSideAvailable(context: ToolContext): boolean {
    return context.offered.size > 0 || this.#serverSide.some((executor) => executor.prepare === undefined);
  }

  /**
   * Asks every executor that offers tools what it offers for this response,
   * concurrently, once the governance accepted what the request names (a
   * refused MCP server is never contacted); tools the tenant may not run are
   * not offered. Returns at once, not a promise, when none has anything to
   * prepare.
   */
  prepare(context: ToolContext, signal: AbortSignal): PreparedTools | Promise<PreparedTools> {
    this.#governance.checkRequest(context);
    // No executor has anything to prepare for this request (the usual one: no MCP server anywhere): known at once, nothing to await.
    if (this.#serverSide.every((executor) => !executor.prepare || executor.offersNothing?.(context) === true)) return NOTHING_PREPARED;
    return this.#prepareEach(context, signal);
  }

  async #prepareEach(context: ToolContext, signal: AbortSignal): Promise<PreparedTools> {
    const prepared = await Promise.all(this.#serverSide.map((executor) => executor.prepare?.(context, signal)));
    // Nothing offered and nothing to announce (no MCP server anywhere, the usual request): no lists to build.
    if (prepared.every((entry) => !entry || (entry.offered.length === 0 && entry.items.length === 0))) return { offered: [], items: [] };
    const offered: OfferedTool[] = [];
    const denied = new Set<string>();
    for (const tool of prepared.flatMap((entry) => entry?.offered ?? [])) {
      if (this.#governance.offers(tool, context.tenant)) offered.push(tool);
      else if (tool.presentation.kind === 'mcp') denied.add(`${tool.presentation.serverLabel}\n${tool.presentation.toolName}`);
    }
    const items = prepared.flatMap((entry) => entry?.items ?? []);
    // A tool the tenant may not run is not listed either: the listing says what this response can use.
    return { offered, items: denied.size === 0 ? items : items.map((item) => (item.type === 'mcp_list_tools' ? { ...item, tools: item.tools.filter((tool) => !denied.has(`${item.server_label}\n${tool.name}`)) } : item)) };
  }

  /** Why the governance refuses to run this call for the request's tenant, or null; asked before every server-side execution. */
  refusal(call: ToolCall, context: ToolContext): string | null {
    return this.#governance.check(call, context);
  }

  /** How a call to `name` shows: as its offered tool's, as a server-side executor says for one of its names it does not offer, else as a function call. */
  presentationOf(name: string, context: ToolContext): CallPresentation {
    const offered = context.offered.get(name);
    if (offered) return offered.presentation;
    for (const executor of this.#serverSide) {
      const presentation = executor.presentationOf?.(name, context);
      if (presentation) return presentation;
    }
    return FUNCTION_PRESENTATION;
  }

  route(call: ToolCall, context: ToolContext): ToolExecutor | null {
    const offered = context.offered.get(call.name);
    if (offered) return offered.executor;
    for (const executor of this.#serverSide) {
      try {
        if (executor.canExecute(call, context)) return executor;
      } catch {
        // An executor that cannot answer does not take the call.
      }
    }
    return this.#client.canExecute(call, context) ? this.#client : null;
  }
}
