import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../../src/providers/provider.ts';
import type { ToolCall, ToolContext, ToolExecutor, ToolResult } from '../../src/executors/tool-executor.ts';

/** One scripted model turn: the events it streams, optionally slowly. */
export interface ScriptedTurn {
  events: TurnEvent[];
  /** Pause before each event, to leave room for cancellation. */
  delayMs?: number;
}

/** A provider double answering each call from a script, recording requests and aborts. */
export class ScriptedProvider implements Provider {
  readonly name = 'scripted';
  readonly requests: TurnRequest[] = [];
  aborted = 0;
  #script: (turn: number, request: TurnRequest) => ScriptedTurn | Error;

  constructor(script: (turn: number, request: TurnRequest) => ScriptedTurn | Error) {
    this.#script = script;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    this.requests.push(structuredClone(request));
    const scripted = this.#script(this.requests.length, request);
    if (scripted instanceof Error) throw scripted;
    const provider = this;
    return (async function* () {
      for (const event of scripted.events) {
        if (scripted.delayMs) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, scripted.delayMs);
            signal.addEventListener('abort', () => {
              clearTimeout(timer);
              provider.aborted++;
              reject(signal.reason);
            }, { once: true });
          });
        }
        yield event;
      }
    })();
  }

  async listModels(): Promise<ModelInfo[]> {
    return [];
  }

  async close(): Promise<void> {}
}

export const text = (value: string): ScriptedTurn => ({ events: [{ type: 'text.delta', delta: value }, { type: 'usage', usage: usage(10, 5) }, { type: 'finish', finish: { reason: 'stop', raw: 'stop' } }] });

export function calls(...list: { id: string; name: string; args?: string }[]): ScriptedTurn {
  const events: TurnEvent[] = [];
  for (const call of list) {
    events.push({ type: 'tool_call.start', callId: call.id, name: call.name });
    events.push({ type: 'tool_call.delta', callId: call.id, delta: call.args ?? '{}' });
  }
  events.push({ type: 'usage', usage: usage(20, 8) }, { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_calls' } });
  return { events };
}

export function usage(input: number, output: number) {
  return { inputTokens: input, outputTokens: output, cachedInputTokens: 0, reasoningTokens: 0 };
}

/** A server-side executor double: handles the named tools, records calls, overlaps and aborts. */
export class MockExecutor implements ToolExecutor {
  readonly kind = 'mock';
  readonly timeoutMs: number | undefined;
  readonly calls: ToolCall[] = [];
  readonly aborts: string[] = [];
  running = 0;
  maxRunning = 0;
  readonly #names: Set<string>;
  readonly #run: (call: ToolCall, signal: AbortSignal) => Promise<ToolResult>;

  constructor(names: string[], run: (call: ToolCall, signal: AbortSignal) => Promise<ToolResult> = async (call) => ({ output: `result of ${call.name}`, isError: false }), timeoutMs?: number) {
    this.#names = new Set(names);
    this.#run = run;
    this.timeoutMs = timeoutMs;
  }

  canExecute(call: ToolCall, _context: ToolContext): boolean {
    return this.#names.has(call.name);
  }

  async execute(call: ToolCall, _context: ToolContext, signal: AbortSignal): Promise<ToolResult> {
    this.calls.push(call);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    signal.addEventListener('abort', () => this.aborts.push(call.callId), { once: true });
    try {
      return await this.#run(call, signal);
    } finally {
      this.running--;
    }
  }
}

/** Sleeps `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    }, { once: true });
  });
}
