import type { ToolCall, ToolContext, ToolExecutor, ToolResult } from './tool-executor.ts';

/**
 * The client `function` executor: it takes every call to a function tool the
 * request declared and "runs" it by handing it back to the client — the loop
 * pauses with `requires_action` instead of calling `execute`.
 */
export class FunctionToolExecutor implements ToolExecutor {
  readonly kind = 'function';
  readonly runsOnClient = true;

  canExecute(call: ToolCall, context: ToolContext): boolean {
    return context.tools.some((tool) => tool.name === call.name);
  }

  async execute(call: ToolCall): Promise<ToolResult> {
    return { output: JSON.stringify({ error: `The tool '${call.name}' runs on the client.` }), isError: true };
  }
}
