import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { GatewayMetrics } from '../src/observability/gateway-metrics.ts';
import { LabelBounds } from '../src/observability/label-bounds.ts';
import { ResponseMetricsObserver } from '../src/observability/response-metrics-observer.ts';
import { freePort } from '../test/support/redis.ts';
import { firstLine, median, ms, percentile, waitHealthy } from './bench-support.ts';

/**
 * Gateway overhead, measured against a floor taken in the same run: the same
 * client calling the scripted upstream directly. Prints absolute figures and
 * the ratios the targets are stated in, and the cost of metrics: the same
 * gateway with metrics on (the default) beside one with them off, measured
 * alternately in the same rounds. Not a test: numbers on a small, noisy
 * machine are for reading, so this never fails on them.
 *
 *   npm run bench            (BENCH_QUICK=1 for a short run)
 *
 * BENCH_TRACING=1 adds a second gateway with tracing on, exporting every
 * response's spans to a local OTLP/HTTP collector (bench/otlp-sink.ts), and
 * measures it beside the plain one in the same rounds: the ratios are
 * tracing's cost per request.
 */

const quick = process.env.BENCH_QUICK === '1';
const LATENCY_REQUESTS = quick ? 300 : 2_000;
const TTFT_REQUESTS = quick ? 200 : 1_000;
const THROUGHPUT_MS = quick ? 1_500 : 5_000;
const CONCURRENCY = 64;
const ROUNDS = quick ? 1 : 3;
const WARMUP_MS = quick ? 1_000 : 3_000;
const METRICS_PAIRS = quick ? 4 : 10;
const METRICS_LATENCY_REQUESTS = quick ? 200 : 500;
const METRICS_LOAD_MS = quick ? 1_000 : 2_500;
const tracing = process.env.BENCH_TRACING === '1';

interface Target {
  name: string;
  pool: Pool;
  path: string;
  body: string;
  streamBody: string;
  /** Bytes that mark the first content token in this target's stream. */
  firstTokenMarker: string;
  /** The serving process, when it is a child of this benchmark (for its CPU time). */
  pid?: number;
}

async function main(): Promise<void> {
  const upstream = await startChild(['bench/fake-upstream.ts'], {});
  const upstreamPort = Number(await firstLine(upstream));
  const gatewayPort = await freePort();
  const gateway = await startChild(['src/main.ts'], {
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    OPENAI_API_KEY: 'bench',
    LOG_LEVEL: 'warn',
  });
  const reference = await startChild(['bench/reference-proxy.ts'], { UPSTREAM_PORT: String(upstreamPort) });
  const referencePort = Number(await firstLine(reference));
  const traced = tracing ? await startTracedGateway(upstreamPort) : null;
  try {
    await waitHealthy(gatewayPort);
    if (traced) await waitHealthy(traced.port);
    const floor: Target = {
      name: 'floor (direct)',
      pool: new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: CONCURRENCY }),
      path: '/v1/chat/completions',
      body: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello' }], stream: false }),
      streamBody: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } }),
      firstTokenMarker: '"content":"Hello"',
    };
    const through: Target = {
      name: 'through loopgate',
      pool: new Pool(`http://127.0.0.1:${gatewayPort}`, { connections: CONCURRENCY }),
      path: '/v1/responses',
      body: JSON.stringify({ model: 'bench-model', input: 'Hello' }),
      streamBody: JSON.stringify({ model: 'bench-model', input: 'Hello', stream: true }),
      firstTokenMarker: 'response.output_text.delta',
      ...(gateway.pid !== undefined && { pid: gateway.pid }),
    };
    const bare: Target = { ...through, name: 'reference proxy', pool: new Pool(`http://127.0.0.1:${referencePort}`, { connections: CONCURRENCY }) };
    const tracedTarget: Target | null = traced ? { ...through, name: 'through loopgate, traced', pool: new Pool(`http://127.0.0.1:${traced.port}`, { connections: CONCURRENCY }), pid: traced.gateway.pid } : null;
    // Warm up: the JIT needs a few seconds of traffic before numbers settle.
    for (const target of [floor, through, bare, ...(tracedTarget ? [tracedTarget] : [])]) {
      await throughput(target, WARMUP_MS);
      await latencies(target, 500, false);
      await latencies(target, 200, true).catch(() => []);
    }

    const rounds: { p50: [number, number]; p99: [number, number]; rps: [number, number]; ttft: [number, number]; referenceRps: number; referenceP50: number; unstoredRps: number }[] = [];
    /** The plain and the traced gateway, measured interleaved (request by request, slice by slice) so both meet the same machine. */
    const tracedRounds: { plain: Figures; traced: Figures }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [floorLatency, gatewayLatency, referenceLatency] = [
        await latencies(floor, LATENCY_REQUESTS, false),
        await latencies(through, LATENCY_REQUESTS, false),
        await latencies(bare, LATENCY_REQUESTS, false),
      ];
      const [floorRps, gatewayRps, referenceRps] = [await throughput(floor), await throughput(through), await throughput(bare)];
      const unstoredRps = await throughput({ ...through, body: JSON.stringify({ model: 'bench-model', input: 'Hello', store: false }) });
      const [floorTtft, gatewayTtft] = [await latencies(floor, TTFT_REQUESTS, true), await latencies(through, TTFT_REQUESTS, true)];
      rounds.push({
        p50: [percentile(floorLatency, 50), percentile(gatewayLatency, 50)],
        p99: [percentile(floorLatency, 99), percentile(gatewayLatency, 99)],
        rps: [floorRps, gatewayRps],
        ttft: [percentile(floorTtft, 50), percentile(gatewayTtft, 50)],
        referenceRps,
        referenceP50: percentile(referenceLatency, 50),
        unstoredRps,
      });
      if (tracedTarget) tracedRounds.push(await interleaved(through, tracedTarget));
    }
    const metrics = await metricsCost(upstreamPort, through);
    const pick = (key: 'p50' | 'p99' | 'rps' | 'ttft', side: 0 | 1) => median(rounds.map((round) => round[key][side]));
    const addedP50 = pick('p50', 1) - pick('p50', 0);
    const addedP99 = pick('p99', 1) - pick('p99', 0);
    const addedTtft = pick('ttft', 1) - pick('ttft', 0);
    const throughputRatio = pick('rps', 1) / pick('rps', 0);

    console.log(`loopgate benchmark — ${ROUNDS} round(s), median of rounds; node ${process.version}, ${quick ? 'quick' : 'full'} run`);
    console.log(`latency at concurrency 1 (${LATENCY_REQUESTS} non-streaming requests):`);
    console.log(`  floor p50 ${ms(pick('p50', 0))}  p99 ${ms(pick('p99', 0))}`);
    console.log(`  gateway p50 ${ms(pick('p50', 1))}  p99 ${ms(pick('p99', 1))}`);
    console.log(`  added p50 ${ms(addedP50)} (target ≤ 0.5 ms, ratio ${(pick('p50', 1) / pick('p50', 0)).toFixed(2)}x)`);
    const referenceP50 = median(rounds.map((round) => round.referenceP50));
    console.log(`  reference proxy p50 ${ms(referenceP50)}: the extra hop alone adds ${ms(referenceP50 - pick('p50', 0))}; the gateway adds ${ms(pick('p50', 1) - referenceP50)} beyond it`);
    console.log(`  added p99 ${ms(addedP99)} (target ≤ 2 ms, ratio ${(pick('p99', 1) / pick('p99', 0)).toFixed(2)}x)`);
    console.log(`throughput at concurrency ${CONCURRENCY} (${THROUGHPUT_MS} ms each):`);
    console.log(`  floor ${pick('rps', 0).toFixed(0)} req/s, gateway ${pick('rps', 1).toFixed(0)} req/s`);
    console.log(`  gateway/floor ${(throughputRatio * 100).toFixed(1)}% (target ≥ 50%)`);
    const referenceRps = median(rounds.map((round) => round.referenceRps));
    console.log(`  gateway with store: false ${median(rounds.map((round) => round.unstoredRps)).toFixed(0)} req/s (the default stores every response)`);
    console.log(`  reference proxy (bare Fastify + undici forwarder) ${referenceRps.toFixed(0)} req/s = ${((referenceRps / pick('rps', 0)) * 100).toFixed(1)}% of floor; gateway = ${((pick('rps', 1) / referenceRps) * 100).toFixed(1)}% of reference`);
    console.log(`time to first token, streaming, concurrency 1 (${TTFT_REQUESTS} requests):`);
    console.log(`  floor p50 ${ms(pick('ttft', 0))}, gateway p50 ${ms(pick('ttft', 1))}`);
    console.log(`  added ${ms(addedTtft)} (target ≤ 1 ms, ratio ${(pick('ttft', 1) / pick('ttft', 0)).toFixed(2)}x)`);
    console.log(`metrics on (the default) beside off: ${METRICS_PAIRS} alternating pairs, medians (each ratio taken within its pair):`);
    console.log(`  p50 at concurrency 1 (${METRICS_LATENCY_REQUESTS} requests each): on ${ms(metrics.p50[0])}, off ${ms(metrics.p50[1])}; on/off ${metrics.p50Ratio.toFixed(3)}x, metrics add ${ms(metrics.p50[0] - metrics.p50[1])} per request`);
    console.log(`  throughput at concurrency ${CONCURRENCY} (${METRICS_LOAD_MS} ms each): on ${metrics.rps[0].toFixed(0)} req/s, off ${metrics.rps[1].toFixed(0)} req/s; on/off ${(metrics.rpsRatio * 100).toFixed(1)}%`);
    console.log(`  gateway CPU per request under load: on ${metrics.cpuMs[0].toFixed(3)} ms, off ${metrics.cpuMs[1].toFixed(3)} ms; on/off ${metrics.cpuRatio.toFixed(3)}x`);
    console.log(`  recording one response's metrics, in process (no I/O): ${(await recordingCostMicros()).toFixed(2)} µs`);
    const scrape = await fetch(`http://127.0.0.1:${gatewayPort}/metrics`);
    console.log(`  one scrape after the run: ${(await scrape.text()).length} bytes`);
    if (traced) await reportTracing(tracedRounds, traced.sinkPort);
    await Promise.all([floor.pool.close(), through.pool.close(), bare.pool.close(), tracedTarget?.pool.close()]);
  } finally {
    traced?.gateway.kill('SIGTERM');
    traced?.sink.kill('SIGTERM');
    reference.kill('SIGTERM');
    gateway.kill('SIGTERM');
    upstream.kill('SIGTERM');
  }
}

/** The gateway with metrics on and off ([on, off], medians over the pairs), and the medians of the ratios within each pair; `cpuMs`: the gateway process's CPU time per request under load. */
interface MetricsCost {
  p50: [number, number];
  rps: [number, number];
  cpuMs: [number, number];
  p50Ratio: number;
  rpsRatio: number;
  cpuRatio: number;
}

/**
 * Two fresh gateways, metrics on and off, with the same history: warmed
 * alike, then measured in short alternating pairs (on first, then off
 * first), each ratio taken within its pair — on a shared machine the load
 * drifts by more than metrics cost, and a pair sees nearly the same drift on
 * both sides.
 */
async function metricsCost(upstreamPort: number, like: Target): Promise<MetricsCost> {
  const gateways: ChildProcess[] = [];
  const start = async (metricsEnabled: boolean): Promise<Target> => {
    const port = await freePort();
    const child = await startChild(['src/main.ts'], { PORT: String(port), HOST: '127.0.0.1', OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`, OPENAI_API_KEY: 'bench', LOG_LEVEL: 'warn', METRICS_ENABLED: String(metricsEnabled) });
    gateways.push(child);
    await waitHealthy(port);
    return { ...like, name: `loopgate, metrics ${metricsEnabled ? 'on' : 'off'}`, pool: new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY }), ...(child.pid !== undefined && { pid: child.pid }) };
  };
  try {
    const [on, off] = [await start(true), await start(false)];
    for (const target of [on, off, on, off]) await throughput(target, WARMUP_MS / 2);
    const cost = await alternate(on, off);
    await Promise.all([on.pool.close(), off.pool.close()]);
    return cost;
  } finally {
    for (const child of gateways) child.kill('SIGTERM');
  }
}

async function alternate(on: Target, off: Target): Promise<MetricsCost> {
  const pairs: { p50: [number, number]; rps: [number, number]; cpuMs: [number, number] }[] = [];
  for (let pair = 0; pair < METRICS_PAIRS; pair++) {
    const measured = new Map<Target, { p50: number; rps: number; cpuMs: number }>();
    for (const target of pair % 2 === 0 ? [on, off] : [off, on]) {
      const p50 = percentile(await latencies(target, METRICS_LATENCY_REQUESTS, false), 50);
      measured.set(target, { p50, ...(await loadWithCpu(target, METRICS_LOAD_MS)) });
    }
    const [a, b] = [measured.get(on)!, measured.get(off)!];
    pairs.push({ p50: [a.p50, b.p50], rps: [a.rps, b.rps], cpuMs: [a.cpuMs, b.cpuMs] });
  }
  const side = (key: 'p50' | 'rps' | 'cpuMs', index: 0 | 1) => median(pairs.map((pair) => pair[key][index]));
  const ratio = (key: 'p50' | 'rps' | 'cpuMs') => median(pairs.map((pair) => pair[key][0] / pair[key][1]));
  return {
    p50: [side('p50', 0), side('p50', 1)],
    rps: [side('rps', 0), side('rps', 1)],
    cpuMs: [side('cpuMs', 0), side('cpuMs', 1)],
    p50Ratio: ratio('p50'),
    rpsRatio: ratio('rps'),
    cpuRatio: ratio('cpuMs'),
  };
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
    observer.turnEnded();
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

/** Throughput, and the CPU time the gateway process spent per request meanwhile (from its /proc stat). */
async function loadWithCpu(target: Target, durationMs: number): Promise<{ rps: number; cpuMs: number }> {
  const before = cpuOf(target);
  const started = performance.now();
  const rps = await throughput(target, durationMs);
  const seconds = (performance.now() - started) / 1000;
  const after = cpuOf(target);
  return { rps, cpuMs: before === null || after === null ? Number.NaN : (after - before) / (rps * seconds) };
}

/** Sequential requests; with `stream`, the time until the first content token arrives. */
async function latencies(target: Target, count: number, stream: boolean): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const response = await target.pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json' }, body: stream ? target.streamBody : target.body });
    if (response.statusCode !== 200) throw new Error(`${target.name}: status ${response.statusCode}: ${await response.body.text()}`);
    if (!stream) {
      await response.body.text();
      samples.push(performance.now() - started);
      continue;
    }
    let seen = '';
    let firstToken = 0;
    for await (const piece of response.body) {
      if (!firstToken) {
        seen += piece.toString();
        if (seen.includes(target.firstTokenMarker)) firstToken = performance.now() - started;
      }
    }
    if (!firstToken) throw new Error(`${target.name}: no first token in the stream`);
    samples.push(firstToken);
  }
  return samples;
}

async function throughput(target: Target, durationMs = THROUGHPUT_MS): Promise<number> {
  let completed = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const response = await target.pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json' }, body: target.body });
        await response.body.text();
        if (response.statusCode === 200) completed++;
      }
    }),
  );
  return completed / ((performance.now() - started) / 1000);
}

/** The CPU time (user + system) a child process has used, in ms; null where /proc cannot tell. */
function cpuOf(target: Target): number | null {
  if (target.pid === undefined) return null;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks (100 per second on Linux).
    const fields = readFileSync(`/proc/${target.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / 100) * 1000;
  } catch {
    return null;
  }
}

/** A second gateway on the same upstream, tracing every response to a local OTLP sink. */
async function startTracedGateway(upstreamPort: number): Promise<{ gateway: ChildProcess; sink: ChildProcess; port: number; sinkPort: number }> {
  const sink = await startChild(['bench/otlp-sink.ts'], {});
  const sinkPort = Number(await firstLine(sink));
  const port = await freePort();
  const gateway = await startChild(['src/main.ts'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    OPENAI_API_KEY: 'bench',
    LOG_LEVEL: 'warn',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
  });
  return { gateway, sink, port, sinkPort };
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
  ttft: number;
}

/** Two gateways measured in turns — latency request by request, throughput in alternating slices — so load on the machine falls on both alike. */
async function interleaved(a: Target, b: Target): Promise<{ plain: Figures; traced: Figures }> {
  const samples = { a: { latency: [] as number[], ttft: [] as number[] }, b: { latency: [] as number[], ttft: [] as number[] } };
  for (let index = 0; index < LATENCY_REQUESTS; index++) {
    samples.a.latency.push(...(await latencies(a, 1, false)));
    samples.b.latency.push(...(await latencies(b, 1, false)));
  }
  for (let index = 0; index < TTFT_REQUESTS; index++) {
    samples.a.ttft.push(...(await latencies(a, 1, true)));
    samples.b.ttft.push(...(await latencies(b, 1, true)));
  }
  const slices = 10;
  let rpsA = 0;
  let rpsB = 0;
  for (let slice = 0; slice < slices; slice++) {
    rpsA += await throughput(a, THROUGHPUT_MS / slices);
    rpsB += await throughput(b, THROUGHPUT_MS / slices);
  }
  const figures = (side: { latency: number[]; ttft: number[] }, rps: number): Figures => ({ p50: percentile(side.latency, 50), p99: percentile(side.latency, 99), rps: rps / slices, ttft: percentile(side.ttft, 50) });
  return { plain: figures(samples.a, rpsA), traced: figures(samples.b, rpsB) };
}

/** Tracing's cost: the traced gateway beside the plain one, medians of the rounds. */
async function reportTracing(rounds: { plain: Figures; traced: Figures }[], sinkPort: number): Promise<void> {
  const of = (side: 'plain' | 'traced', key: keyof Figures) => median(rounds.map((round) => round[side][key]));
  // The batch processor exports every few seconds: give the last batch time to arrive.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  const stats = (await (await fetch(`http://127.0.0.1:${sinkPort}/stats`)).json()) as { spans: number; exports: number; bytes: number };
  console.log(`tracing on vs off, measured interleaved (traces exported over OTLP/HTTP, protobuf, to a local collector on this machine: ${stats.spans} spans in ${stats.exports} exports, ${Math.round(stats.bytes / Math.max(1, stats.spans))} bytes a span):`);
  console.log(`  latency p50 ${ms(of('traced', 'p50'))} vs ${ms(of('plain', 'p50'))}: +${ms(of('traced', 'p50') - of('plain', 'p50'))}, ratio ${(of('traced', 'p50') / of('plain', 'p50')).toFixed(3)}x`);
  console.log(`  latency p99 ${ms(of('traced', 'p99'))} vs ${ms(of('plain', 'p99'))}: ratio ${(of('traced', 'p99') / of('plain', 'p99')).toFixed(3)}x`);
  console.log(`  throughput ${of('traced', 'rps').toFixed(0)} vs ${of('plain', 'rps').toFixed(0)} req/s: ${((of('traced', 'rps') / of('plain', 'rps')) * 100).toFixed(1)}%`);
  console.log(`  time to first token p50 ${ms(of('traced', 'ttft'))} vs ${ms(of('plain', 'ttft'))}: +${ms(of('traced', 'ttft') - of('plain', 'ttft'))}, ratio ${(of('traced', 'ttft') / of('plain', 'ttft')).toFixed(3)}x`);
}

function startChild(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return Promise.resolve(child);
}

await main();
process.exit(0);
