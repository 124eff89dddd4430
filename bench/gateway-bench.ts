import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { freePort } from '../test/support/redis.ts';
import { firstLine, median, ms, percentile, waitHealthy } from './bench-support.ts';

/**
 * Gateway overhead, measured against a floor taken in the same run: the same
 * client calling the scripted upstream directly. Prints absolute figures and
 * the ratios the targets are stated in. Not a test: numbers on a small, noisy
 * machine are for reading, so this never fails on them.
 *
 *   npm run bench            (BENCH_QUICK=1 for a short run)
 */

const quick = process.env.BENCH_QUICK === '1';
const LATENCY_REQUESTS = quick ? 300 : 2_000;
const TTFT_REQUESTS = quick ? 200 : 1_000;
const THROUGHPUT_MS = quick ? 1_500 : 5_000;
const CONCURRENCY = 64;
const ROUNDS = quick ? 1 : 3;
const WARMUP_MS = quick ? 1_000 : 3_000;

interface Target {
  name: string;
  pool: Pool;
  path: string;
  body: string;
  streamBody: string;
  /** Bytes that mark the first content token in this target's stream. */
  firstTokenMarker: string;
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
  try {
    await waitHealthy(gatewayPort);
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
    };
    const bare: Target = { ...through, name: 'reference proxy', pool: new Pool(`http://127.0.0.1:${referencePort}`, { connections: CONCURRENCY }) };
    // Warm up: the JIT needs a few seconds of traffic before numbers settle.
    for (const target of [floor, through, bare]) {
      await throughput(target, WARMUP_MS);
      await latencies(target, 500, false);
      await latencies(target, 200, true).catch(() => []);
    }

    const rounds: { p50: [number, number]; p99: [number, number]; rps: [number, number]; ttft: [number, number]; referenceRps: number; referenceP50: number; unstoredRps: number }[] = [];
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
    }
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
    await Promise.all([floor.pool.close(), through.pool.close(), bare.pool.close()]);
  } finally {
    reference.kill('SIGTERM');
    gateway.kill('SIGTERM');
    upstream.kill('SIGTERM');
  }
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

function startChild(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return Promise.resolve(child);
}

await main();
process.exit(0);
