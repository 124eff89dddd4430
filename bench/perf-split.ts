import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/redis.ts';
import { firstLine, startNode, startPrintingPort, waitHealthy } from './bench-support.ts';
import { alternatingLoad, loadSlice, poolFor, type Target } from './load.ts';
import { gatewayEnv } from './observability-cost.ts';

/**
 * Where the gateway's CPU goes beside the floor's, measured by Linux `perf`
 * rather than V8's profiler (`npm run bench:perf`).
 *
 * Why another profile: `--cpu-prof` samples wall time on the main thread, so
 * a frame that waits in the kernel, or whose thread the scheduler took away
 * (on two cores shared with the load generator and the upstream, often),
 * counts as busy. It made the socket write of the reply (`writeUtf8String`)
 * the top item at 13% of the gateway's profile, 24 µs a response above the
 * forwarder's: on the CPU that write costs the two the same. `perf record`
 * samples on-CPU time only, every thread (V8's compiler and collector ones
 * too) and the kernel's share, so per response the two servers' figures
 * can be subtracted.
 *
 * Each server (the forwarder, the storing forwarder, the gateway) runs with
 * `--perf-basic-prof-only-functions --interpreted-frames-native-stack`,
 * settles under load, then is recorded through load slices at concurrency
 * 64, the three in turns.
 * Every sample is charged to its nearest JavaScript frame (with the native
 * code that frame called: JSON, builtins, the kernel under a write) and
 * summed by package or project folder; samples with no JavaScript frame at
 * all are the event loop's own, the collector's, or another thread's.
 *
 *   node bench/perf-split.ts      BENCH_ROUNDS=3  BENCH_SLICE_MS=3000  BENCH_SETTLE_MS=20000  BENCH_TOP=25
 *   BENCH_BY=function             charge each sample to its JavaScript function (name and file) rather than its package or file
 *
 * Needs `perf` (Debian: linux-perf) allowed to record its own user's
 * processes (`kernel.perf_event_paranoid` ≤ 2).
 */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 3_000);
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 20_000);
const top = Number(process.env.BENCH_TOP ?? 25);
const byFunction = process.env.BENCH_BY === 'function';
const SAMPLE_HZ = 2_999;
const PERF_FLAGS = ['--perf-basic-prof-only-functions', '--interpreted-frames-native-stack'];

interface Split {
  name: string;
  responses: number;
  /** Samples by where they were charged; once all are in, µs a response. */
  byPlace: Map<string, number>;
}

if (spawnSync('perf', ['--version']).status !== 0) {
  console.error('bench/perf-split.ts needs Linux perf on the PATH (Debian: apt-get install linux-perf)');
  process.exit(1);
}

const workDir = mkdtempSync(join(tmpdir(), 'loopgate-perf-'));
const children: ChildProcess[] = [];
try {
  const { port: upstreamPort } = await startPrintingPort(children, ['bench/fake-upstream.ts']);
  const request = { path: '/v1/responses', body: JSON.stringify({ model: 'bench-model', input: 'Hello' }), streamBody: '', firstTokenMarker: '' };
  const printsPort = async (name: string, script: string): Promise<Target> => {
    const child = startNode([script], { UPSTREAM_PORT: String(upstreamPort) }, PERF_FLAGS);
    children.push(child);
    return { name, pool: poolFor(Number(await firstLine(child))), ...request, pid: child.pid! };
  };
  const targets = [await printsPort('forwarder', 'bench/translating-forwarder.ts'), await printsPort('storing forwarder', 'bench/storing-forwarder.ts')];
  const port = await freePort();
  const gateway = startNode(['src/main.ts'], gatewayEnv(upstreamPort, port), PERF_FLAGS);
  children.push(gateway);
  await waitHealthy(port);
  targets.push({ name: 'gateway', pool: poolFor(port), ...request, pid: gateway.pid! });

  // A fresh gateway spends about twice its settled CPU over its first seconds of load (README, "Test it").
  await alternatingLoad(targets, 4, settleMs / 4);
  // In turns, as every figure of the benchmark: drift on a shared machine falls on all three alike.
  const splits: Split[] = targets.map((target) => ({ name: target.name, responses: 0, byPlace: new Map() }));
  for (let round = 0; round < rounds; round++) {
    for (let step = 0; step < targets.length; step++) {
      const index = (round + step) % targets.length;
      await recordSlice(targets[index]!, splits[index]!);
    }
  }
  for (const split of splits) for (const [place, samples] of split.byPlace) split.byPlace.set(place, (samples * 1e6) / SAMPLE_HZ / split.responses);
  await Promise.all(targets.map((target) => target.pool.close()));
  print(splits);
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(workDir, { recursive: true, force: true });
}

/** One load slice with `perf record` on the server throughout, its responses and samples by place added to `split`. */
async function recordSlice(target: Target, split: Split): Promise<void> {
  const file = join(workDir, `${target.pid}.data`);
  const perf = spawn('perf', ['record', '--quiet', '-e', 'cpu-clock', '-F', String(SAMPLE_HZ), '-g', '-p', String(target.pid), '-o', file], { stdio: 'ignore' });
  // perf attaches within a few ms; the slice starts after it has.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const slice = await loadSlice(target, sliceMs);
  perf.kill('SIGINT');
  await once(perf, 'exit');
  const script = spawnSync('perf', ['script', '-i', file, '-F', 'comm,ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  split.responses += slice.responses;
  for (const [place, samples] of samplesByPlace(script.stdout)) split.byPlace.set(place, (split.byPlace.get(place) ?? 0) + samples);
}

/** Sample counts by place: the package or project file of the sample's nearest JavaScript frame, or what ran without one. */
function samplesByPlace(script: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const block of script.split('\n\n')) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0) continue;
    const thread = lines[0]!.trim();
    const frames = lines.slice(1).map((line) => line.trim().replace(/^[0-9a-f]+ /, ''));
    const place = thread.startsWith('MainThread') ? placeOf(frames) : `(other threads: ${frames.some(isCollector) ? 'collector' : 'compiler and others'})`;
    counts.set(place, (counts.get(place) ?? 0) + 1);
  }
  return counts;
}

function placeOf(frames: string[]): string {
  const js = frames.find((frame) => frame.startsWith('JS:'));
  if (!js) return frames.some(isCollector) ? '(collector, main thread)' : '(event loop and runtime, no JS frame)';
  if (byFunction) return js.replace(/^JS:[*~^+-]?/, '').replace(/file:\/\/\S*?\/(node_modules|src|bench)\//, '$1/');
  const where = /(node_modules\/(?:@[^/]+\/)?[^/]+|src\/[^:]+|bench\/[^:]+|node:[^: ]+|wasm)/.exec(js);
  return where ? where[1]!.replace(/^node_modules\//, '') : js;
}

function isCollector(frame: string): boolean {
  return /Scavenge|MarkCompact|Heap::|GCTracer|Sweeper|ConcurrentMarking/.test(frame);
}

function print(splits: Split[]): void {
  const [forwarder, , gateway] = splits as [Split, Split, Split];
  const total = (split: Split) => [...split.byPlace.values()].reduce((sum, value) => sum + value, 0);
  console.log(`perf split: on-CPU µs per response, JSON, c=64, ${rounds} interleaved slices of ${sliceMs} ms each after ${settleMs} ms of settling load (every thread, kernel included)`);
  for (const split of splits) console.log(`  ${split.name.padEnd(20)}${total(split).toFixed(1).padStart(8)} µs   ${(total(split) / total(forwarder)).toFixed(3)}×   (${split.responses} responses)`);
  const places = [...new Set([...gateway.byPlace.keys(), ...forwarder.byPlace.keys()])];
  const rows = places.map((place) => ({ place, gateway: gateway.byPlace.get(place) ?? 0, forwarder: forwarder.byPlace.get(place) ?? 0 })).sort((a, b) => b.gateway - b.forwarder - (a.gateway - a.forwarder));
  console.log(`\nwhere the gateway spends more than the forwarder, µs per response (top ${top}):`);
  const width = byFunction ? 88 : 48;
  console.log(`  ${'place'.padEnd(width)}${'gateway'.padStart(9)}${'forwarder'.padStart(11)}${'more'.padStart(8)}`);
  for (const row of rows.slice(0, top)) console.log(`  ${row.place.slice(0, width - 1).padEnd(width)}${row.gateway.toFixed(1).padStart(9)}${row.forwarder.toFixed(1).padStart(11)}${(row.gateway - row.forwarder).toFixed(1).padStart(8)}`);
  const fewer = rows.filter((row) => row.forwarder > row.gateway).reverse().slice(0, Math.ceil(top / 3));
  console.log(`\nwhere the forwarder spends more than the gateway (the same work done elsewhere, as a socket write by another call):`);
  for (const row of fewer) console.log(`  ${row.place.slice(0, width - 1).padEnd(width)}${row.gateway.toFixed(1).padStart(9)}${row.forwarder.toFixed(1).padStart(11)}${(row.gateway - row.forwarder).toFixed(1).padStart(8)}`);
  // A function's place reads "name src/…" (BENCH_BY=function), a folder's "src/…".
  const project = rows.filter((row) => /(?:^|\s)src\//.test(row.place)).reduce((sum, row) => sum + row.gateway, 0);
  console.log(`\n  the gateway's own code (src/, with the native code it calls): ${project.toFixed(1)} µs of ${total(gateway).toFixed(1)}; the rest is Node, its libraries and the runtime, beside the forwarder's ${total(forwarder).toFixed(1)}`);
}
