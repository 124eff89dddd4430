import type { ChildProcess } from 'node:child_process';
import { freePort } from '../test/support/redis.ts';
import { cpuMsByThreadOf, median, startNode, startPrintingPort, waitHealthy } from './bench-support.ts';
import { alternatingLoad, CONCURRENCY, loadSlice, poolFor, type Target } from './load.ts';
import { gatewayEnv } from './observability-cost.ts';

/**
 * Where the gateway's CPU per response goes beyond the floor, rung by rung,
 * in one interleaved run (JSON, c=64, the gateway bench's request):
 *
 *   forwarder          bench/translating-forwarder.ts: the floor of issue 16
 *   storing forwarder  bench/storing-forwarder.ts: + the whole response object and the memory store
 *   gateway            src/main.ts as `npm start` runs it
 *
 * Each rung's CPU per response is split by thread from /proc: the main
 * thread's user and kernel time, and every other thread (V8's collector and
 * compiler threads, libuv's pool), which is where promoting objects to the
 * old generation shows.
 *
 *   node bench/floor-ladder.ts     BENCH_ROUNDS=10  BENCH_SLICE_MS=1000
 */
const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 1_000);

const children: ChildProcess[] = [];
try {
  const { port: upstreamPort } = await startPrintingPort(children, ['bench/fake-upstream.ts']);
  const request = { path: '/v1/responses', body: JSON.stringify({ model: 'bench-model', input: 'Hello' }), streamBody: '', firstTokenMarker: '' };
  const printsPort = async (name: string, script: string): Promise<Target> => {
    const { child, port } = await startPrintingPort(children, [script], { UPSTREAM_PORT: String(upstreamPort) });
    return { name, pool: poolFor(port), ...request, pid: child.pid! };
  };
  const rungs = [await printsPort('forwarder', 'bench/translating-forwarder.ts'), await printsPort('storing forwarder', 'bench/storing-forwarder.ts')];
  const port = await freePort();
  const gateway = startNode(['src/main.ts'], gatewayEnv(upstreamPort, port));
  children.push(gateway);
  await waitHealthy(port);
  rungs.push({ name: 'gateway', pool: poolFor(port), ...request, pid: gateway.pid! });

  // Settled first, as in bench/gateway-bench.ts: a fresh gateway costs about twice as much over its first seconds.
  await alternatingLoad(rungs, 4, 4_000);
  const perRung = rungs.map(() => ({ total: [] as number[], split: [] as [number, number, number][] }));
  for (let round = 0; round < rounds; round++) {
    for (let step = 0; step < rungs.length; step++) {
      const index = (round + step) % rungs.length;
      const rung = rungs[index]!;
      const before = cpuMsByThreadOf(rung.pid!);
      const slice = await loadSlice(rung, sliceMs);
      const after = cpuMsByThreadOf(rung.pid!);
      const perResponse = (ms: number) => (ms * 1000) / slice.responses;
      perRung[index]!.total.push(perResponse(slice.cpuMs));
      perRung[index]!.split.push([perResponse(after.mainUser - before.mainUser), perResponse(after.mainKernel - before.mainKernel), perResponse(after.otherThreads - before.otherThreads)]);
    }
  }
  const floor = perRung[0]!.total;
  console.log(`floor ladder: CPU per response, JSON, c=${CONCURRENCY}, ${rounds} interleaved rounds of ${sliceMs} ms, medians (ratios: each round's own, against the forwarder)`);
  console.log(`  ${''.padEnd(20)}${'CPU'.padStart(10)}${'ratio'.padStart(9)}   main thread user / kernel, other threads`);
  perRung.forEach(({ total, split }, index) => {
    const ratio = median(total.map((value, round) => value / floor[round]!));
    const part = (which: number) => median(split.map((figures) => figures[which]!)).toFixed(1);
    console.log(`  ${rungs[index]!.name.padEnd(20)}${`${median(total).toFixed(1)} µs`.padStart(10)}${`${ratio.toFixed(3)}×`.padStart(9)}   ${part(0)} / ${part(1)}, ${part(2)} µs`);
  });
  await Promise.all(rungs.map((rung) => rung.pool.close()));
} finally {
  for (const child of children) child.kill('SIGTERM');
}
