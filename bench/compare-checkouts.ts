import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../test/support/redis.ts';
import { median, percentile, startNode, startPrintingPort, waitHealthy } from './bench-support.ts';
import { alternatingLoad, poolFor, type Target } from './load.ts';
import { gatewayEnv } from './observability-cost.ts';

/**
 * This checkout's gateway against another's (a worktree of main, say), in
 * one run: the same upstream and load, slices interleaved, so a change
 * costing a few percent shows through the machine's noise, which a
 * before-and-after pair of runs minutes apart does not.
 *
 *   BENCH_BASELINE=/path/to/other/checkout node bench/compare-checkouts.ts
 *   BENCH_ROUNDS=8 (rounds of a JSON and a streamed slice each)  BENCH_SLICE_MS=600
 *   BENCH_NODE_FLAGS="--max-semi-space-size=32"   Node flags for this checkout's gateway only (to weigh a flag against none)
 *   BENCH_ENV="METRICS_ENABLED=false"               environment for this checkout's gateway only (BENCH_BASELINE=. weighs a setting)
 */
const baseline = process.env.BENCH_BASELINE;
if (!baseline || !existsSync(join(baseline, 'src/main.ts'))) {
  console.error('BENCH_BASELINE must name another checkout of loopgate (with its node_modules installed or linked)');
  process.exit(2);
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 600);

const children: ChildProcess[] = [];
try {
  const { port: upstreamPort } = await startPrintingPort(children, ['bench/fake-upstream.ts']);
  const gateway = async (name: string, main: string, flags: string[] = [], env: Record<string, string> = {}): Promise<Target> => {
    const port = await freePort();
    const child = startNode([main], { ...gatewayEnv(upstreamPort, port), ...env }, flags);
    children.push(child);
    await waitHealthy(port);
    return { name, pool: poolFor(port), path: '/v1/responses', body: JSON.stringify({ model: 'bench-model', input: 'Hello' }), streamBody: JSON.stringify({ model: 'bench-model', input: 'Hello', stream: true }), firstTokenMarker: 'response.output_text.delta', pid: child.pid! };
  };
  const thisEnv = Object.fromEntries((process.env.BENCH_ENV ?? '').split(' ').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  const targets = [await gateway('this checkout', 'src/main.ts', (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), thisEnv), await gateway('baseline', resolve(baseline, 'src/main.ts'))];
  const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 2_000);
  await alternatingLoad(targets, 2, warmupMs);
  await alternatingLoad(targets, 1, 1_000, true);
  const json: number[][] = [[], []];
  const stream: number[][] = [[], []];
  const rps: number[][] = [[], []];
  for (let round = 0; round < rounds; round++) {
    const jsonFigures = await alternatingLoad(targets, 1, sliceMs);
    const streamFigures = await alternatingLoad(targets, 1, sliceMs, true);
    jsonFigures.forEach((figures, side) => (json[side]!.push(figures.cpuMicros), rps[side]!.push(figures.rps)));
    streamFigures.forEach((figures, side) => stream[side]!.push(figures.cpuMicros));
  }
  const ratios = (figures: number[][]) => figures[0]!.map((value, round) => value / figures[1]![round]!);
  // The middle half of the rounds' ratios says how far to trust the median: a change inside it is not shown.
  const line = (label: string, figures: number[][], unit: string) =>
    console.log(`  ${label.padEnd(34)}${median(figures[0]!).toFixed(0).padStart(8)}${median(figures[1]!).toFixed(0).padStart(10)} ${unit.padEnd(6)}${median(ratios(figures)).toFixed(3).padStart(8)}×   ${percentile(ratios(figures), 25).toFixed(3)}–${percentile(ratios(figures), 75).toFixed(3)}`);
  if (process.env.BENCH_VERBOSE) for (const [label, figures] of [["json", json], ["stream", stream]] as const) console.log(label, figures.map((side) => side.map((value) => value.toFixed(0)).join(" ")).join("  |  "));
  console.log(`this checkout against ${baseline}: ${rounds} rounds, medians (the ratio is the median of each round's own ratio)`);
  console.log(`  ${''.padEnd(34)}${'this'.padStart(8)}${'baseline'.padStart(10)}       ${'ratio'.padStart(8)}   middle half of rounds`);
  line('CPU per response, JSON, c=64', json, 'µs');
  line('CPU per streamed response, c=64', stream, 'µs');
  line('throughput, JSON, c=64', rps, '/s');
  await Promise.all(targets.map((target) => target.pool.close()));
} finally {
  for (const child of children) child.kill('SIGTERM');
}
