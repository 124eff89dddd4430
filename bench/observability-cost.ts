import type { ChildProcess } from 'node:child_process';
import { GatewayMetrics } from '../src/observability/gateway-metrics.ts';
import { LabelBounds } from '../src/observability/label-bounds.ts';
import { ResponseMetricsObserver } from '../src/observability/response-metrics-observer.ts';
import { freePort } from '../test/support/redis.ts';
import { firstLine, median, ms, percentile, startNode, waitHealthy } from './bench-support.ts';
import { alternatingLoad, interleavedLatencies, poolFor, type Target } from './load.ts';

/**
 * What metrics and tracing cost the gateway: fresh gateways with one of them
 * on and off, warmed alike, measured in turns so both meet the same machine,
 * each ratio taken within its pair.
 */

export function gatewayEnv(upstreamPort: number, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return { PORT: String(port), HOST: '127.0.0.1', OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`, OPENAI_API_KEY: 'bench', LOG_LEVEL: 'warn', ...extra };
}

async function startGateway(upstreamPort: number, like: Target, name: string, extra: Record<string, string>, children: ChildProcess[]): Promise<Target> {
  const port = await freePort();
  const child = startNode(['src/main.ts'], gatewayEnv(upstreamPort, port, extra));
  children.push(child);
  await waitHealthy(port);
  return { ...like, name, pool: poolFor(port), ...(child.pid !== undefined && { pid: child.pid }) };
}

/** Metrics on (the default) beside off, in `pairs` alternating pairs; prints the figures. */
export async function reportMetricsCost(upstreamPort: number, like: Target, pairs: number, latencyRequests: number, loadMs: number): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    const on = await startGateway(upstreamPort, like, 'metrics on', { METRICS_ENABLED: 'true' }, children);
    const off = await startGateway(upstreamPort, like, 'metrics off', { METRICS_ENABLED: 'false' }, children);
    await alternatingLoad([on, off], 2, loadMs);
    const measured: { p50: [number, number]; rps: [number, number]; cpu: [number, number] }[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      const [onLatency, offLatency] = await interleavedLatencies([on, off], latencyRequests, false);
      const [onLoad, offLoad] = await alternatingLoad(pair % 2 === 0 ? [on, off] : [off, on], 1, loadMs);
      const [a, b] = pair % 2 === 0 ? [onLoad!, offLoad!] : [offLoad!, onLoad!];
      measured.push({ p50: [percentile(onLatency!, 50), percentile(offLatency!, 50)], rps: [a.rps, b.rps], cpu: [a.cpuMicros, b.cpuMicros] });
    }
    const side = (key: 'p50' | 'rps' | 'cpu', index: 0 | 1) => median(measured.map((pair) => pair[key][index]));
    const ratio = (key: 'p50' | 'rps' | 'cpu') => median(measured.map((pair) => pair[key][0] / pair[key][1]));
    console.log(`metrics on (the default) beside off: ${pairs} alternating pairs, medians (each ratio taken within its pair):`);
    console.log(`  p50 at concurrency 1 (${latencyRequests} requests each): on ${ms(side('p50', 0))}, off ${ms(side('p50', 1))}; on/off ${ratio('p50').toFixed(3)}x`);
    console.log(`  throughput (${loadMs} ms slices): on ${side('rps', 0).toFixed(0)} req/s, off ${side('rps', 1).toFixed(0)} req/s; on/off ${(ratio('rps') * 100).toFixed(1)}%`);
    console.log(`  CPU per response under load: on ${side('cpu', 0).toFixed(0)} µs, off ${side('cpu', 1).toFixed(0)} µs; on/off ${ratio('cpu').toFixed(3)}x`);
    console.log(`  recording one response's metrics, in process (no I/O): ${(await recordingCostMicros()).toFixed(2)} µs`);
    await Promise.all([on.pool.close(), off.pool.close()]);
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}

/**
 * What the metrics of one plain JSON response cost on their own, measured in
 * this process where no load drifts: the request count, one timed store
 * write, one turn, the first token and the response's end, through the same
 * observer the engine uses.
 */
async function recordingCostMicros(): Promise<number> {
  const metrics = new GatewayMetrics(new LabelBounds({ models: ['bench-model'], providers: ['openai'], tenants: ['default'], mcpServers: [] }));
  const store = metrics.storeMeter('responses');
  const write = async () => {};
  const usage = { input_tokens: 5, output_tokens: 5, total_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const one = async () => {
    const observer = new ResponseMetricsObserver(metrics);
    const started = { responseId: 'resp_bench', model: 'bench-model', provider: 'openai', upstreamModel: 'bench-model', tenant: 'default', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: performance.now() };
    observer.modelCallFirstOutput();
    observer.turnStarted();
    await store.time('put', write);
    observer.responseEnded({ ...started, status: 'completed', errorCode: null, error: null, incompleteReason: null, usage, toolCalls: 0, durationMs: 1 });
    metrics.request('POST', '/v1/responses', 200);
  };
  for (let index = 0; index < 20_000; index++) await one();
  const count = 200_000;
  const started = performance.now();
  for (let index = 0; index < count; index++) await one();
  return ((performance.now() - started) / count) * 1000;
}

/**
 * Tracing on beside off: a gateway exporting every response's spans to a
 * local OTLP/HTTP collector (bench/otlp-sink.ts) and a plain one, measured
 * interleaved over `rounds`; prints the figures.
 */
export async function reportTracingCost(upstreamPort: number, like: Target, rounds: number, latencyRequests: number, ttftRequests: number, sliceMs: number): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    const sink = startNode(['bench/otlp-sink.ts'], {});
    children.push(sink);
    const sinkPort = Number(await firstLine(sink));
    const plain = await startGateway(upstreamPort, like, 'tracing off', {}, children);
    const traced = await startGateway(upstreamPort, like, 'tracing on', { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}` }, children);
    await alternatingLoad([plain, traced], 2, sliceMs);
    const figures: { p50: [number, number]; p99: [number, number]; ttft: [number, number]; rps: [number, number] }[] = [];
    for (let round = 0; round < rounds; round++) {
      const [plainLatency, tracedLatency] = await interleavedLatencies([plain, traced], latencyRequests, false);
      const [plainTtft, tracedTtft] = await interleavedLatencies([plain, traced], ttftRequests, true);
      const [plainLoad, tracedLoad] = await alternatingLoad([plain, traced], 4, sliceMs);
      figures.push({
        p50: [percentile(plainLatency!, 50), percentile(tracedLatency!, 50)],
        p99: [percentile(plainLatency!, 99), percentile(tracedLatency!, 99)],
        ttft: [percentile(plainTtft!, 50), percentile(tracedTtft!, 50)],
        rps: [plainLoad!.rps, tracedLoad!.rps],
      });
    }
    const of = (key: 'p50' | 'p99' | 'ttft' | 'rps', index: 0 | 1) => median(figures.map((round) => round[key][index]));
    // The batch processor exports every few seconds: give the last batch time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const stats = (await (await fetch(`http://127.0.0.1:${sinkPort}/stats`)).json()) as { spans: number; exports: number; bytes: number };
    console.log(`tracing on vs off, measured interleaved (OTLP/HTTP protobuf to a local collector: ${stats.spans} spans in ${stats.exports} exports, ${Math.round(stats.bytes / Math.max(1, stats.spans))} bytes a span):`);
    console.log(`  latency p50 ${ms(of('p50', 1))} vs ${ms(of('p50', 0))}: +${ms(of('p50', 1) - of('p50', 0))}; p99 ${ms(of('p99', 1))} vs ${ms(of('p99', 0))}`);
    console.log(`  throughput ${of('rps', 1).toFixed(0)} vs ${of('rps', 0).toFixed(0)} req/s: ${((of('rps', 1) / of('rps', 0)) * 100).toFixed(1)}%`);
    console.log(`  time to first token p50 ${ms(of('ttft', 1))} vs ${ms(of('ttft', 0))}: +${ms(of('ttft', 1) - of('ttft', 0))}`);
    await Promise.all([plain.pool.close(), traced.pool.close()]);
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}
