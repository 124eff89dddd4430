import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort, startRedisServer } from '../test/support/redis.ts';
import { firstLine, startNode, startPrintingPort, waitHealthy } from './bench-support.ts';
import { alternatingLoad, CONCURRENCY, poolFor, type Target } from './load.ts';
import { gatewayEnv } from './observability-cost.ts';
import { summarizeProfile } from './profile-summary.ts';

/**
 * The gateway under load with V8's profilers on, for finding where its time
 * goes (`BENCH_PROFILE=dir npm run bench`): it runs with `--cpu-prof` (and
 * `--heap-prof` with BENCH_HEAP_PROFILE=1, a sampling allocation profile) at
 * concurrency 64, metrics and tracing at their defaults, then stops and
 * prints the top of the profile over the measured window only (start-up and
 * warm-up left out).
 *
 *   BENCH_PROFILE_LOAD=json|stream     (default json)
 *   BENCH_PROFILE_STORE=memory|redis   (default memory; redis starts its own redis-server)
 *   BENCH_PROFILE_MS=10000             the measured window
 *   BENCH_ALLOCATIONS=1                also every allocation of the window, freed ones included (bench/allocation-sampler.ts): what feeds the GC
 *   BENCH_ALLOCATIONS=promoted         instead only the allocations that outlived the young collections: what gets promoted
 *   BENCH_PROFILE_TARGET=forwarder     profile the floor (bench/translating-forwarder.ts) instead, to compare
 *   BENCH_PROFILE_TARGET=storing-forwarder   or the floor that also answers the whole response and stores it (bench/storing-forwarder.ts)
 */
export async function profileGateway(directory: string): Promise<void> {
  const load = process.env.BENCH_PROFILE_LOAD === 'stream' ? 'stream' : 'json';
  const store = process.env.BENCH_PROFILE_STORE === 'redis' ? 'redis' : 'memory';
  const windowMs = Number(process.env.BENCH_PROFILE_MS ?? 10_000);
  const heap = process.env.BENCH_HEAP_PROFILE === '1';
  const forwarderScript = { forwarder: 'bench/translating-forwarder.ts', 'storing-forwarder': 'bench/storing-forwarder.ts' }[process.env.BENCH_PROFILE_TARGET ?? ''] ?? null;
  const forwarder = forwarderScript !== null;
  const allocations = process.env.BENCH_ALLOCATIONS === '1' || process.env.BENCH_ALLOCATIONS === 'promoted';
  const dir = resolve(directory);
  mkdirSync(dir, { recursive: true });
  const name = `${forwarder ? process.env.BENCH_PROFILE_TARGET : 'gateway'}-${load}-${store}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const allocationFile = join(dir, `${name}.allocations.heapprofile`);
  const flags = [
    `--cpu-prof`,
    `--cpu-prof-dir=${dir}`,
    `--cpu-prof-name=${name}.cpuprofile`,
    ...(heap ? ['--heap-prof', `--heap-prof-dir=${dir}`, `--heap-prof-name=${name}.heapprofile`] : []),
    ...(allocations ? ['--import', './bench/allocation-sampler.ts'] : []),
  ];
  const allocationEnv: Record<string, string> = allocations ? { LOOPGATE_ALLOCATION_PROFILE: allocationFile, ...(process.env.BENCH_ALLOCATIONS === 'promoted' && { LOOPGATE_ALLOCATION_SURVIVORS: '1' }) } : {};
  const redis = store === 'redis' ? await startRedisServer() : null;
  const children: ChildProcess[] = [];
  try {
    const { port: upstreamPort } = await startPrintingPort(children, ['bench/fake-upstream.ts']);
    let port: number;
    let gateway: ChildProcess;
    if (forwarder) {
      gateway = startNode([forwarderScript], { UPSTREAM_PORT: String(upstreamPort), ...allocationEnv }, flags);
      children.push(gateway);
      port = Number(await firstLine(gateway));
    } else {
      port = await freePort();
      gateway = startNode(['src/main.ts'], { ...gatewayEnv(upstreamPort, port, redis ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'loopgate-bench:', STORE_TTL_SECONDS: '600' } : {}), ...allocationEnv }, flags);
      children.push(gateway);
      await waitHealthy(port, '/readyz');
    }
    const target: Target = {
      name: 'gateway',
      pool: poolFor(port),
      path: '/v1/responses',
      body: JSON.stringify({ model: 'bench-model', input: 'Hello' }),
      streamBody: JSON.stringify({ model: 'bench-model', input: 'Hello', stream: true }),
      firstTokenMarker: 'response.output_text.delta',
      pid: gateway.pid!,
    };
    // Settled first: a fresh gateway's first ~15 s of load cost about twice what it settles at (bench/gateway-bench.ts).
    await alternatingLoad([target], 1, 20_000, load === 'stream');
    if (allocations) gateway.kill('SIGUSR2');
    const from = process.hrtime.bigint() / 1000n;
    const [figures] = await alternatingLoad([target], 1, windowMs, load === 'stream');
    const to = process.hrtime.bigint() / 1000n;
    await target.pool.close();
    const exited = once(gateway, 'exit');
    gateway.kill('SIGTERM');
    await exited;
    console.log(`profiled the ${forwarder ? 'forwarder' : 'gateway'}: ${load}, ${store} store, concurrency ${CONCURRENCY}, ${windowMs} ms measured: ${figures!.rps.toFixed(0)} responses/s, ${figures!.cpuMicros.toFixed(0)} CPU-µs a response (profiler on)`);
    const window = { fromMicros: Number(from), toMicros: Number(to) };
    console.log(`profiles in ${dir}; over the measured window: node bench/profile-summary.ts ${join(dir, `${name}.cpuprofile`)} --from-us=${window.fromMicros} --to-us=${window.toMicros}\n`);
    summarizeProfile(join(dir, `${name}.cpuprofile`), { ...window, top: 25 });
    if (heap) summarizeProfile(join(dir, `${name}.heapprofile`), { top: 25 });
    if (allocations) {
      console.log(`\nallocations over the measured window, per response: divide by ${Math.round(figures!.rps * windowMs / 1000)} responses`);
      summarizeProfile(allocationFile, { top: 30 });
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await redis?.stop();
  }
}
