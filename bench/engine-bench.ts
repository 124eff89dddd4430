import { collectResponse } from '../src/engine/collect-response.ts';
import { ResponseEngine } from '../src/engine/response-engine.ts';
import { UsageRecorder } from '../src/engine/usage-recorder.ts';
import { ExecutorRegistry } from '../src/executors/executor-registry.ts';
import { GatewayMetrics } from '../src/observability/gateway-metrics.ts';
import { LabelBounds } from '../src/observability/label-bounds.ts';
import { MeteredResponseStore } from '../src/observability/metered-response-store.ts';
import { ResponseMetricsObserver } from '../src/observability/response-metrics-observer.ts';
import { CreateResponseRequest } from '../src/protocol/create-response-request.ts';
import { ModelRouter } from '../src/providers/model-router.ts';
import type { Provider, TurnEvent } from '../src/providers/provider.ts';
import { MemoryResponseStore } from '../src/store/memory-response-store.ts';
import { MemoryUsageStore } from '../src/store/memory-usage-store.ts';
import { median } from './bench-support.ts';

/**
 * The engine alone, in process: CPU per response of `createResponse` and
 * reading its events, for a plain request answered at once by an in-process
 * model, with what the gateway runs around it by default (the memory store
 * at its 10,000 entries, metered; the metrics and usage observers). No
 * sockets, no other process: where `compare-checkouts.ts` reads ±10–20% on a
 * shared 2-core machine (the two gateways' processes fare differently), the
 * medians here agree within a few percent from run to run, so an engine
 * change can be weighed here first.
 *
 *   node bench/engine-bench.ts            (BENCH_QUICK=1: fewer rounds)
 */
const quick = process.env.BENCH_QUICK === '1';
const CONCURRENCY = 64;
const PER_ROUND = quick ? 10_000 : 30_000;
const ROUNDS = quick ? 3 : 7;

const answer: TurnEvent[] = [
  { type: 'upstream.response', id: 'chatcmpl-bench', model: 'bench-model' },
  { type: 'text.delta', delta: 'Hello! How can I help you today?' },
  { type: 'usage', usage: { inputTokens: 12, outputTokens: 9, cachedInputTokens: 0, reasoningTokens: 0 } },
  { type: 'finish', finish: { reason: 'stop', raw: 'stop' } },
];
/** A model that answers at once, as a non-streamed upstream answer reads: every event of the turn in one array. */
const instant: Provider = {
  name: 'openai',
  startTurn: async () => answer,
  listModels: async () => [],
  close: async () => {},
};

const metrics = new GatewayMetrics(new LabelBounds({ models: [], providers: ['openai'], tenants: ['default'], mcpServers: [] }));
const usage = new UsageRecorder({ store: new MemoryUsageStore({ retentionDays: 400 }), log: { warn() {}, info() {} } });
const engine = new ResponseEngine({
  router: new ModelRouter(new Map([['openai', instant]]), {}, 'openai'),
  store: new MeteredResponseStore(new MemoryResponseStore({ maxEntries: 10_000, ttlSeconds: 600 }), metrics.storeMeter('responses')),
  executors: new ExecutorRegistry([]),
  limits: { maxTurns: 10, toolTimeoutMs: 10_000, deadlineMs: 60_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action' },
  defaultModel: 'bench-model',
  responseObservers: [() => new ResponseMetricsObserver(metrics), () => usage],
});
const request = CreateResponseRequest.parse({ model: 'bench-model', input: 'Hello' });

/** CPU µs per response over `count` responses, `CONCURRENCY` at a time, delivered as JSON (`final`) or as events. */
async function cpuPerResponse(count: number, delivery: 'final' | 'events'): Promise<number> {
  let left = count;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const run = await engine.createResponse(request, { tenant: 'default', signal: new AbortController().signal, delivery });
        if ((await collectResponse(run.events))?.status !== 'completed') throw new Error('the response did not complete');
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / count;
}

// Warm up until the JIT and the store (full, evicting) have settled.
await cpuPerResponse(PER_ROUND * 2, 'final');
await cpuPerResponse(PER_ROUND, 'events');
const json: number[] = [];
const events: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  json.push(await cpuPerResponse(PER_ROUND, 'final'));
  events.push(await cpuPerResponse(PER_ROUND, 'events'));
}
const show = (samples: number[]) => `${median(samples).toFixed(1)} µs (rounds ${samples.map((value) => value.toFixed(1)).join(' ')})`;
console.log(`engine in process — a plain request answered at once, ${CONCURRENCY} at a time, memory store and metrics as by default; CPU per response, median of ${ROUNDS} rounds of ${PER_ROUND}:`);
console.log(`  JSON (final delivery):   ${show(json)}`);
console.log(`  events (SSE delivery):   ${show(events)}`);
