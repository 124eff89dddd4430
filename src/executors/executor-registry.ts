import { FunctionToolExecutor } from './function-tool-executor.ts';
import type { ToolCall, ToolContext, ToolExecutor } from './tool-executor.ts';

/**
 * Routes each call to the executor that can run it: the server-side
 * executors first, in the order they were registered, then the client
 * `function` executor for tools the request declared. Null means nobody can:
 * the model called a tool that does not exist.
 */
export class ExecutorRegistry {
  readonly #serverSide: readonly ToolExecutor[];
  readonly #client = new FunctionToolExecutor();

  constructor(serverSide: readonly ToolExecutor[]) {
    this.#serverSide = serverSide;
  }

  /** Without server-side executors the gateway is single-shot: calls go back to the client as they are (SC-008). */
  get hasServerSideExecutors(): boolean {
    return this.#serverSide.length > 0;
  }

  route(call: ToolCall, context: ToolContext): ToolExecutor | null {
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
