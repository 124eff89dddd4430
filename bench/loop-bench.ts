import { ResponseEngine } from '../src/engine/response-engine.ts';
import type { LoopObserver } from '../src/engine/loop-observer.ts';
import { ExecutorRegistry } from '../src/executors/executor-registry.ts';
import type { ToolCall, ToolExecutor, ToolResult } from '../src/executors/tool-executor.ts';
import { CreateResponseRequest } from '../src/protocol/create-response-request.ts';
import { ModelRouter } from '../src/providers/model-router.ts';
import type { Provider, TurnEvent, TurnRequest } from '../src/providers/provider.ts';
import { MemoryResponseStore } from '../src/store/memory-response-store.ts';
import { median, ms } from './bench-support.ts';

/**
 * The agentic loop in process, with an instant model and a tool that sleeps:
 * 1. tool-phase wall time for k = 1, 4, 16 concurrent calls of a 100 ms tool,
 *    against the ideal (100 ms) — parallel efficiency;
 * 2. the loop's own cost per turn (instant model, instant tool).
 *
 *   npm run bench:loop
 */
const TOOL_MS = 100;
const quick = process.env.BENCH_QUICK === '1';

/** Calls the tool `k` times in its first turn, then answers. */
function modelCalling(k: number, turnsWithCalls = 1): Provider {
  return {
    name: 'instant',
    async startTurn(request: TurnRequest) {
      const done = request.items.filter((item) => item.type === 'function_call_output').length;
      const turn = done / k;
      const events: TurnEvent[] = [];
      if (turn < turnsWithCalls) {
        for (let index = 0; index < k; index++) {
          const callId = `call_${turn}_${index}`;
          events.push({ type: 'tool_call.start', callId, name: 'sleepy' }, { type: 'tool_call.delta', callId, delta: '{}' });
        }
        events.push({ type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_calls' } });
      } else {
        events.push({ type: 'text.delta', delta: 'done' }, { type: 'finish', finish: { reason: 'stop', raw: 'stop' } });
      }
      return events;
    },
    listModels: async () => [],
    close: async () => {},
  };
}

function sleepyTool(delayMs: number): ToolExecutor {
  return {
    kind: 'sleepy',
    canExecute: (call: ToolCall) => call.name === 'sleepy',
    execute: (_call: ToolCall, _context, signal: AbortSignal) =>
      // An instant tool answers at once: even a 0 ms timer would cost a millisecond.
      delayMs === 0 ? Promise.resolve({ output: 'ok', isError: false }) : new Promise<ToolResult>((resolve) => {
        const timer = setTimeout(() => resolve({ output: 'ok', isError: false }), delayMs);
        signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
      }),
  };
}

function engineFor(provider: Provider, executor: ToolExecutor): ResponseEngine {
  return new ResponseEngine({
    router: new ModelRouter(new Map([['instant', provider]]), {}, 'instant'),
    store: new MemoryResponseStore({ maxEntries: 100_000, ttlSeconds: 600 }),
    executors: new ExecutorRegistry([executor]),
    limits: { maxTurns: 100, toolTimeoutMs: 10_000, deadlineMs: 60_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action' },
    defaultModel: 'bench',
  });
}

const request = CreateResponseRequest.parse({ model: 'bench', input: 'go', tools: [{ type: 'function', name: 'sleepy' }] });

async function runOnce(engine: ResponseEngine, observers: LoopObserver[] = []): Promise<void> {
  const run = await engine.createResponse(request, { tenant: 'bench', signal: new AbortController().signal, observers });
  for await (const _batch of run.events);
}

async function toolPhase(k: number): Promise<number> {
  const engine = engineFor(modelCalling(k), sleepyTool(TOOL_MS));
  const samples: number[] = [];
  for (let round = 0; round < (quick ? 3 : 10); round++) {
    let first = 0;
    let last = 0;
    await runOnce(engine, [
      {
        toolCallStarted: () => (first ||= performance.now()),
        toolCallEnded: () => (last = performance.now()),
      },
    ]);
    samples.push(last - first);
  }
  return median(samples);
}

async function perTurnOverhead(): Promise<number> {
  const turns = 20;
  const looping = engineFor(modelCalling(1, turns), sleepyTool(0));
  const single = engineFor(modelCalling(1, 0), sleepyTool(0));
  const time = async (engine: ResponseEngine) => {
    const started = performance.now();
    await runOnce(engine);
    return performance.now() - started;
  };
  for (let index = 0; index < 50; index++) {
    await time(looping);
    await time(single);
  }
  const loopSamples: number[] = [];
  const singleSamples: number[] = [];
  for (let index = 0; index < (quick ? 50 : 300); index++) {
    loopSamples.push(await time(looping));
    singleSamples.push(await time(single));
  }
  return (median(loopSamples) - median(singleSamples)) / turns;
}

console.log(`agentic loop — tool sleeps ${TOOL_MS} ms; model and store in process`);
for (const k of [1, 4, 16]) {
  const wall = await toolPhase(k);
  console.log(`  k=${String(k).padStart(2)}: tool phase ${ms(wall)} vs ideal ${ms(TOOL_MS)} → parallel efficiency ${((TOOL_MS / wall) * 100).toFixed(1)}%${k === 16 ? ' (target ≥ 90%)' : ''}`);
}
console.log(`  loop overhead per turn (one instant tool call, 20 turns vs 1): ${ms(await perTurnOverhead())}`);
