import type { ToolErrorSanitizer } from '../executors/sanitize-tool-error.ts';
import type { ToolCall, ToolContext, ToolExecutor, ToolResult } from '../executors/tool-executor.ts';
import { carriedTrace, type LoopObserver, type TraceCarrier } from './loop-observer.ts';
import { errorOutput } from './plan-tool-calls.ts';

export interface ToolRunOptions {
  context: ToolContext;
  /** Run the calls concurrently (fan-out/fan-in) or one after another (`parallel_tool_calls: false`). */
  parallel: boolean;
  /** Per-call limit for executors that do not set their own. */
  defaultTimeoutMs: number;
  /** The response's signal: client gone or deadline passed. */
  signal: AbortSignal;
  observer: Required<LoopObserver>;
  /** Every error output passes through it before the model and the client see it. */
  errors: ToolErrorSanitizer;
  turn: number;
  /** Called as each call finishes, in completion order. */
  onResult(index: number, result: ToolResult): void;
}

/** A server-side call and its executor; `itemId` where the client finds it under another id than the call's (an `mcp_call`'s). */
export interface RunnableCall {
  call: ToolCall;
  executor: ToolExecutor;
  itemId?: string;
}

/**
 * Runs server-side calls and returns their results in call order. A call that
 * throws, times out or is cancelled becomes an error result, and every error
 * result is sanitised (sanitize-tool-error.ts); the loop never
 * waits on an executor past its timeout or the response's cancellation, even
 * one that ignores its abort signal.
 */
export async function runToolCalls(calls: readonly RunnableCall[], options: ToolRunOptions): Promise<ToolResult[]> {
  const runOne = async ({ call, executor, itemId }: RunnableCall, index: number): Promise<ToolResult> => {
    const started = performance.now();
    const carrier: TraceCarrier = {};
    options.observer.toolCallStarted({ turn: options.turn, callId: call.callId, itemId: itemId ?? call.callId, name: call.name, executor: executor.kind, arguments: call.arguments, trace: carrier });
    const trace = carriedTrace(carrier);
    // Each call carries its own trace context; without one, every call shares the response's context as it is.
    const context = trace ? { ...options.context, trace } : options.context;
    const outcome = await executeWithLimits(call, executor, context, options);
    // The operator's log keeps the error as it was (configured secrets are redacted from log lines anyway).
    options.observer.toolCallEnded({
      turn: options.turn,
      callId: call.callId,
      name: call.name,
      executor: executor.kind,
      server: options.context.offered.get(call.name)?.operatorServer ?? null,
      durationMs: performance.now() - started,
      error: outcome.isError ? outcome.output : null,
      ...(outcome.unfinished && { unfinished: true }),
      output: outcome.output,
    });
    const result = outcome.isError ? { ...outcome, output: options.errors.sanitize(outcome.output, options.context) } : outcome;
    options.onResult(index, result);
    return result;
  };
  if (options.parallel) return Promise.all(calls.map(runOne));
  const results: ToolResult[] = [];
  for (const [index, planned] of calls.entries()) results.push(await runOne(planned, index));
  return results;
}

async function executeWithLimits(call: ToolCall, executor: ToolExecutor, context: ToolContext, options: ToolRunOptions): Promise<ToolResult> {
  // The most specific limit wins: the offered tool's (an MCP server's `timeoutMs`, else `mcp.timeoutMs`), the executor's, the loop's.
  const timeoutMs = context.offered.get(call.name)?.timeoutMs ?? executor.timeoutMs ?? options.defaultTimeoutMs;
  if (options.signal.aborted) return { output: errorOutput('The call was cancelled before it started.'), isError: true };
  // One controller per call, aborted by the response's signal or the call's timeout; both are removed afterwards.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  const onResponseAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener('abort', onResponseAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, timeoutMs);
  let onAbort: () => void = () => {};
  const aborted = new Promise<ToolResult>((resolve) => {
    onAbort = () =>
      resolve({
        output: errorOutput(timedOut ? `The tool '${call.name}' did not finish within ${timeoutMs} ms.` : 'The call was cancelled.'),
        isError: true,
        unfinished: true,
      });
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      executor.execute(call, context, signal).then(
        (result) => result,
        (error: unknown) => ({ output: errorOutput(`The tool '${call.name}' failed: ${error instanceof Error ? error.message : String(error)}`), isError: true }),
      ),
      aborted,
    ]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    options.signal.removeEventListener('abort', onResponseAbort);
  }
}
