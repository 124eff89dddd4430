import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { initialResponse } from '../src/engine/initial-response.ts';
import { RedisResponseStore } from '../src/store/redis-response-store.ts';
import type { StoredResponse } from '../src/store/response-store.ts';
import { acquireRedis, freePort } from '../test/support/redis.ts';
import { firstLine, ms, percentile, waitHealthy } from './bench-support.ts';

/**
 * What state costs, measured against a baseline in the same run:
 * 1. rebuilding a `previous_response_id` chain of depth 100 against depth 1 (Redis);
 * 2. a stored response (`store: true`, Redis and memory) against `store: false`
 *    through the whole gateway, at concurrency 1.
 *
 *   npm run bench:store       (BENCH_QUICK=1 for a short run)
 */
const quick = process.env.BENCH_QUICK === '1';
const CHAIN_SAMPLES = quick ? 300 : 2_000;
const REQUESTS = quick ? 500 : 3_000;
const root = fileURLToPath(new URL('..', import.meta.url));

async function main(): Promise<void> {
  const redis = await acquireRedis();
  const upstream = spawn(process.execPath, ['bench/fake-upstream.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const children: ChildProcess[] = [upstream];
  try {
    const upstreamPort = Number(await firstLine(upstream));
    await chainBench(redis.url, redis.prefix());
    for (const kind of ['redis', 'memory'] as const) {
      const port = await freePort();
      const gateway = spawn(process.execPath, ['src/main.ts'], {
        cwd: root,
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`, ...(kind === 'redis' ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix() } : { REDIS_URL: '' }) },
        stdio: 'inherit',
      });
      children.push(gateway);
      await waitHealthy(port, '/readyz');
      await storeBench(kind, port);
      gateway.kill('SIGTERM');
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await redis.cleanup();
    await redis.stop();
  }
}

async function chainBench(url: string, keyPrefix: string): Promise<void> {
  const store = new RedisResponseStore({ url, keyPrefix, ttlSeconds: 600, commandTimeoutMs: 2_000 });
  for (let index = 0; index < 100; index++) await store.put(sample(`resp_${index}`, index === 0 ? null : `resp_${index - 1}`));
  const measure = async (id: string) => {
    const samples: number[] = [];
    for (let index = 0; index < CHAIN_SAMPLES; index++) {
      const started = performance.now();
      await store.chain('bench', id);
      samples.push(performance.now() - started);
    }
    return samples;
  };
  await measure('resp_99');
  const [depthOne, depthHundred] = [await measure('resp_0'), await measure('resp_99')];
  console.log(`chain rebuild from Redis (${CHAIN_SAMPLES} each, one EVALSHA round trip):`);
  console.log(`  depth 1 p50 ${ms(percentile(depthOne, 50))}, depth 100 p50 ${ms(percentile(depthHundred, 50))} (p99 ${ms(percentile(depthHundred, 99))}), ratio ${(percentile(depthHundred, 50) / percentile(depthOne, 50)).toFixed(2)}x`);
  await store.close();
}

async function storeBench(kind: string, port: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  const bodies = { stored: JSON.stringify({ model: 'bench-model', input: 'Hello', store: true }), unstored: JSON.stringify({ model: 'bench-model', input: 'Hello', store: false }) };
  const run = async (body: string, count: number) => {
    const samples: number[] = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      const response = await pool.request({ method: 'POST', path: '/v1/responses', headers: { 'content-type': 'application/json' }, body });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      samples.push(performance.now() - started);
    }
    return samples;
  };
  await run(bodies.stored, 500);
  await run(bodies.unstored, 500);
  // Alternate blocks so drift on a noisy machine hits both sides alike.
  const stored: number[] = [];
  const unstored: number[] = [];
  for (let block = 0; block < 10; block++) {
    unstored.push(...(await run(bodies.unstored, REQUESTS / 10)));
    stored.push(...(await run(bodies.stored, REQUESTS / 10)));
  }
  const added = percentile(stored, 50) - percentile(unstored, 50);
  console.log(`storing a response (${kind} store, concurrency 1, ${REQUESTS} requests each):`);
  console.log(`  store:false p50 ${ms(percentile(unstored, 50))}, store:true p50 ${ms(percentile(stored, 50))} → added ${ms(added)} (target ≤ 0.3 ms)`);
  await pool.close();
}

function sample(id: string, previousResponseId: string | null): StoredResponse {
  const response = initialResponse({ model: 'm', input: 'question' }, id, 'm', 0);
  response.status = 'completed';
  response.output = [{ type: 'message', id: `msg_o_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'An answer of ordinary length, a sentence or two long, as models give.', annotations: [] }] }];
  return { tenant: 'bench', response, inputItems: [{ id: `msg_i_${id}`, type: 'message', role: 'user', content: 'A question of ordinary length?' }], previousResponseId };
}

await main();
process.exit(0);
