import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedisServer } from '../test/support/redis.ts';
import { firstLine, median, ms, openFileLimits, percentile, startNode, waitHealthy } from './bench-support.ts';
import { profileGateway } from './gateway-profile.ts';
import { idleStreamMemory, type IdleStreamFigures } from './idle-streams.ts';
import { alternatingLoad, CONCURRENCY, interleavedLatencies, poolFor, type LoadFigures, type Target } from './load.ts';
import { gatewayEnv, reportMetricsCost, reportTracingCost } from './observability-cost.ts';
import { RedisRoundTrip } from './redis-round-trip.ts';

/**
 * The gateway against its floor, in one run: a bare translating forwarder
 * (bench/translating-forwarder.ts: the same Fastify and undici, the same
 * Responses ↔ Chat translation, nothing else) on the same scripted upstream,
 * driven by the same load generator with the same requests, the two measured
 * in turns so drift on the machine falls on both. Latencies are also taken
 * straight from the upstream ("direct"), so added time means the same for
 * both. The full run's load slices also measure a storing forwarder
 * (bench/storing-forwarder.ts: the floor plus the whole response object and
 * the memory store), so that each run shows how much of the gateway's CPU
 * above the floor is storing and how much its engine and app. Prints each of issue 16's targets beside its measured ratio. Not a
 * test: figures on a small, shared machine are for reading, so this never
 * fails on them.
 *
 *   npm run bench              full run, a few minutes
 *   npm run bench:quick        the ratios in under a minute (BENCH_QUICK=1)
 *   BENCH_TRACING=1            adds tracing's cost (a gateway exporting every trace to a local collector)
 *   BENCH_METRICS=0|1          leaves out / adds the metrics-on-vs-off comparison (default: full run only)
 *   BENCH_PROFILE=dir          profiles the gateway under load instead (bench/gateway-profile.ts)
 */

const quick = process.env.BENCH_QUICK === '1';
const ROUNDS = quick ? 3 : 5;
const LATENCY_REQUESTS = quick ? 120 : 600;
const TTFT_REQUESTS = quick ? 80 : 400;
const REDIS_REQUESTS = quick ? 120 : 600;
const SLICES = quick ? 2 : 3;
const SLICE_MS = quick ? 500 : 1_200;
const WARMUP_MS = quick ? 800 : 3_000;
/**
 * Seconds of load each server gets before anything is measured. A fresh
 * gateway spends about twice its settled CPU per response over its first
 * ~15 s of load at c=64 (the JIT's tiers, the heap sizing itself up: seen with
 * and without storing), while the forwarder settles within a few seconds;
 * the figures are for servers that have been running, as in production.
 */
const STEADY_STATE_SECONDS = quick ? 10 : 25;
const IDLE_STREAMS = quick ? 1_000 : 10_000;
const metrics = process.env.BENCH_METRICS ? process.env.BENCH_METRICS === '1' : !quick;
const tracing = process.env.BENCH_TRACING === '1';

/** Each round's figures: [gateway, forwarder] or, for latencies, [direct, gateway, forwarder]. */
interface Round {
  p50: number[];
  p99: number[];
  ttft: number[];
  load: LoadFigures[];
  /** p50 at concurrency 1 of the Redis-backed gateway and the memory-backed one. */
  store: [number, number];
  /** p50 of a bare write of a stored response's size to the same Redis, from this process. */
  redisRoundTrip: number;
}

async function main(): Promise<void> {
  const began = performance.now();
  const children: ChildProcess[] = [];
  const start = (args: string[], env: Record<string, string>) => {
    const child = startNode(args, env);
    children.push(child);
    return child;
  };
  const redis = await startRedisServer();
  try {
    const upstream = start(['bench/fake-upstream.ts'], {});
    const upstreamPort = Number(await firstLine(upstream));
    const forwarder = start(['bench/translating-forwarder.ts'], { UPSTREAM_PORT: String(upstreamPort) });
    // The middle rung: full run only, so that the quick run stays under a minute.
    const storingForwarder = quick ? null : start(['bench/storing-forwarder.ts'], { UPSTREAM_PORT: String(upstreamPort) });
    // The provider's connection pool is sized for the idle streams, which each hold an upstream connection.
    const config = join(mkdtempSync(join(tmpdir(), 'loopgate-bench-')), 'loopgate.jsonc');
    writeFileSync(config, JSON.stringify({ providers: { openai: { type: 'openai-chat', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, connections: IDLE_STREAMS + 1_000 } } }));
    const [gatewayPort, redisGatewayPort] = [await freePort(), await freePort()];
    const gateway = start(['src/main.ts'], gatewayEnv(upstreamPort, gatewayPort, { LOOPGATE_CONFIG: config }));
    const redisGateway = start(['src/main.ts'], gatewayEnv(upstreamPort, redisGatewayPort, { LOOPGATE_CONFIG: config, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'loopgate-bench:', STORE_TTL_SECONDS: '600' }));
    const forwarderPort = Number(await firstLine(forwarder));
    await Promise.all([waitHealthy(gatewayPort), waitHealthy(redisGatewayPort, '/readyz')]);

    const responses = { path: '/v1/responses', body: JSON.stringify({ model: 'bench-model', input: 'Hello' }), streamBody: JSON.stringify({ model: 'bench-model', input: 'Hello', stream: true }), firstTokenMarker: 'response.output_text.delta' };
    const direct: Target = {
      name: 'direct',
      pool: poolFor(upstreamPort),
      path: '/v1/chat/completions',
      body: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello' }], stream: false }),
      streamBody: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } }),
      firstTokenMarker: '"content":"Hello"',
    };
    const through: Target & { pid: number } = { name: 'gateway', pool: poolFor(gatewayPort), ...responses, pid: gateway.pid! };
    const floor: Target & { pid: number } = { name: 'forwarder', pool: poolFor(forwarderPort), ...responses, pid: forwarder.pid! };
    const redisBacked: Target = { name: 'gateway, Redis store', pool: poolFor(redisGatewayPort), ...responses, pid: redisGateway.pid! };
    const middle: Target[] = storingForwarder ? [{ name: 'storing forwarder', pool: poolFor(Number(await firstLine(storingForwarder))), ...responses, pid: storingForwarder.pid! }] : [];

    // Warm up: the JIT needs a few seconds of traffic before figures settle.
    await alternatingLoad([direct], 1, WARMUP_MS / 2);
    await alternatingLoad([through, floor, redisBacked, ...middle], STEADY_STATE_SECONDS, 1_000);
    await alternatingLoad([through, floor], 1, WARMUP_MS / 2, true);
    await interleavedLatencies([direct, through, floor], quick ? 40 : 100, true);

    // A stored record of the bench's response is about 1.2 KB of JSON; the store writes it with its items and turn, about 2.5 KB.
    const redisFloor = new RedisRoundTrip(redis.url, 2_500);
    await redisFloor.times(50);
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const latency = await interleavedLatencies([direct, through, floor], LATENCY_REQUESTS, false);
      const ttft = await interleavedLatencies([direct, through, floor], TTFT_REQUESTS, true);
      const load = await alternatingLoad([through, floor, direct, ...middle], SLICES, SLICE_MS);
      const [redisLatency, memoryLatency] = await interleavedLatencies([redisBacked, through], REDIS_REQUESTS, false);
      const redisRoundTrip = percentile(await redisFloor.times(REDIS_REQUESTS), 50);
      rounds.push({
        p50: latency.map((samples) => percentile(samples, 50)),
        p99: latency.map((samples) => percentile(samples, 99)),
        ttft: ttft.map((samples) => percentile(samples, 50)),
        load,
        store: [percentile(redisLatency!, 50), percentile(memoryLatency!, 50)],
        redisRoundTrip,
      });
    }
    const streamed = quick ? null : await alternatingLoad([through, floor], SLICES * 2, SLICE_MS, true);
    const streams = idleStreamCount();
    const idle = [await idleStreamMemory(through, gatewayPort, streams), await idleStreamMemory(floor, forwarderPort, streams)] as const;
    report(rounds, streamed, idle);
    if (metrics) await reportMetricsCost(upstreamPort, through, quick ? 2 : 4, quick ? 150 : 300, quick ? 800 : 1_500);
    if (tracing) await reportTracingCost(upstreamPort, through, quick ? 1 : 3, LATENCY_REQUESTS, TTFT_REQUESTS, SLICE_MS);
    console.log(`(the run took ${((performance.now() - began) / 1000).toFixed(0)} s)`);
    await Promise.all([direct, through, floor, redisBacked, ...middle].map((target) => target.pool.close()));
    await redisFloor.close();
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await redis.stop();
  }
}

/** The idle streams asked for, or as many as the open-file limits allow: the server holds two sockets a stream, this process one. */
function idleStreamCount(): number {
  const limits = openFileLimits();
  const allowed = Math.floor(Math.min((limits.hard - 500) / 2, limits.soft - 1_000));
  if (allowed >= IDLE_STREAMS) return IDLE_STREAMS;
  console.log(`note: open-file limits (soft ${limits.soft}, hard ${limits.hard}) allow ${allowed} idle streams, not ${IDLE_STREAMS}; raise ulimit -n (hard) for the full count`);
  return Math.max(100, Math.floor(allowed / 100) * 100);
}

function report(rounds: Round[], streamed: LoadFigures[] | null, idle: readonly [IdleStreamFigures, IdleStreamFigures]): void {
  const of = (pick: (round: Round) => number) => median(rounds.map(pick));
  const [DIRECT, GATEWAY, FORWARDER] = [0, 1, 2];
  const added = (key: 'p50' | 'p99' | 'ttft', side: number) => of((round) => round[key][side]! - round[key][DIRECT]!);
  const cpuRatio = of((round) => round.load[0]!.cpuMicros / round.load[1]!.cpuMicros);
  const rpsRatio = of((round) => round.load[0]!.rps / round.load[1]!.rps);
  const extraP50 = added('p50', GATEWAY) - added('p50', FORWARDER);
  const extraTtft = added('ttft', GATEWAY) - added('ttft', FORWARDER);
  const redisAdds = of((round) => round.store[0] - round.store[1]);
  const idleMiB = idle[0].mibPerThousand;
  const verdict = (met: boolean) => (met ? 'PASS' : 'MISS');
  const row = (label: string, gateway: string, forwarder: string, measured: string, target: string, met: boolean | null) =>
    console.log(`  ${label.padEnd(36)}${gateway.padStart(12)}${forwarder.padStart(12)}${measured.padStart(12)}   ${target.padEnd(22)}${met === null ? '' : verdict(met)}`);
  const micros = (value: number) => `${value.toFixed(0)} µs`;
  const perSecond = (value: number) => `${value.toFixed(0)}/s`;
  const plus = (value: number) => `${value >= 0 ? '+' : ''}${ms(value)}`;
  const mib = (value: number) => `${value.toFixed(1)} MiB`;

  console.log(`loopgate benchmark — ${quick ? 'quick' : 'full'} run, node ${process.version}: gateway against a bare translating forwarder, ${ROUNDS} interleaved rounds, medians of rounds`);
  console.log(`  (requests {"model","input":"Hello"}, JSON or streamed, to a scripted Chat upstream on loopback; per round: ${SLICES} load slices of ${SLICE_MS} ms each at c=${CONCURRENCY}, ${LATENCY_REQUESTS} latency, ${TTFT_REQUESTS} first-token and ${REDIS_REQUESTS} Redis-vs-memory requests at c=1, each interleaved)`);
  row('', 'gateway', 'forwarder', 'measured', 'target (issue 16)', null);
  row(`CPU per response, JSON, c=${CONCURRENCY}`, micros(of((round) => round.load[0]!.cpuMicros)), micros(of((round) => round.load[1]!.cpuMicros)), `${cpuRatio.toFixed(2)}×`, '≤ 1.5×', cpuRatio <= 1.5);
  row(`throughput, JSON, c=${CONCURRENCY}`, perSecond(of((round) => round.load[0]!.rps)), perSecond(of((round) => round.load[1]!.rps)), `${rpsRatio.toFixed(2)}×`, '≥ 0.67×', rpsRatio >= 0.67);
  row('added p50, JSON, c=1', ms(added('p50', GATEWAY)), ms(added('p50', FORWARDER)), plus(extraP50), '≤ forwarder + 0.15 ms', extraP50 <= 0.15);
  row('added p99, JSON, c=1', ms(added('p99', GATEWAY)), ms(added('p99', FORWARDER)), plus(added('p99', GATEWAY) - added('p99', FORWARDER)), '', null);
  row('first token added, stream, c=1', ms(added('ttft', GATEWAY)), ms(added('ttft', FORWARDER)), plus(extraTtft), '≤ forwarder + 0.3 ms', extraTtft <= 0.3);
  row(`memory / 1,000 idle streams (${idle[0].streams})`, mib(idleMiB), mib(idle[1].mibPerThousand), `${(idleMiB / idle[1].mibPerThousand).toFixed(2)}×`, '≤ 40 MiB (gateway)', idleMiB <= 40);
  row('Redis store adds, p50, JSON, c=1', plus(redisAdds), '', '', '≤ 0.3 ms', redisAdds <= 0.3);
  const roundTrip = of((round) => round.redisRoundTrip);
  row('  of which a bare Redis round trip', ms(roundTrip), '', plus(redisAdds - roundTrip), '(the rest: the gateway)', null);
  if (streamed) {
    const [gateway, forwarder] = streamed as [LoadFigures, LoadFigures];
    row(`CPU per streamed response, c=${CONCURRENCY}`, micros(gateway.cpuMicros), micros(forwarder.cpuMicros), `${(gateway.cpuMicros / forwarder.cpuMicros).toFixed(2)}×`, '(20 deltas a stream)', null);
    row(`streamed responses, c=${CONCURRENCY}`, perSecond(gateway.rps), perSecond(forwarder.rps), `${(gateway.rps / forwarder.rps).toFixed(2)}×`, '', null);
  }
  // The medians above are of these: how far apart the rounds are says how much of a miss or a pass is this machine's noise.
  const each = (pick: (round: Round) => number) => rounds.map((round) => pick(round).toFixed(2)).join(' ');
  console.log(`each round's own ratio: CPU ${each((round) => round.load[0]!.cpuMicros / round.load[1]!.cpuMicros)}; throughput ${each((round) => round.load[0]!.rps / round.load[1]!.rps)}`);
  if (rounds[0]!.load[3]) {
    const storingRatio = of((round) => round.load[3]!.cpuMicros / round.load[1]!.cpuMicros);
    const beyondStoring = of((round) => round.load[0]!.cpuMicros / round.load[3]!.cpuMicros);
    console.log(`between them, a storing forwarder (the floor + the whole response object + the memory store; bench/storing-forwarder.ts): CPU per response ${micros(of((round) => round.load[3]!.cpuMicros))}, ${storingRatio.toFixed(2)}× the forwarder; the gateway's engine and app on top: ${beyondStoring.toFixed(2)}× the storing forwarder`);
  }
  console.log(`direct to the upstream (the earlier floor): p50 ${ms(of((round) => round.p50[DIRECT]!))}, p99 ${ms(of((round) => round.p99[DIRECT]!))}, first token ${ms(of((round) => round.ttft[DIRECT]!))}, ${perSecond(of((round) => round.load[2]!.rps))}; gateway/direct throughput ${(of((round) => round.load[0]!.rps / round.load[2]!.rps) * 100).toFixed(1)}%, forwarder/direct ${(of((round) => round.load[1]!.rps / round.load[2]!.rps) * 100).toFixed(1)}%`);
  console.log(`gateway p50 at c=1: memory store ${ms(of((round) => round.store[1]))}, Redis store ${ms(of((round) => round.store[0]))}; idle streams: gateway RSS ${mib(idle[0].baselineBytes / 1048576)} → peak ${mib(idle[0].peakBytes / 1048576)}, forwarder ${mib(idle[1].baselineBytes / 1048576)} → ${mib(idle[1].peakBytes / 1048576)}`);
}

if (process.env.BENCH_PROFILE) await profileGateway(process.env.BENCH_PROFILE);
else await main();
process.exit(0);
