import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { freePort, startRedisServer } from '../test/support/redis.ts';
import { firstLine, percentile, waitHealthy } from './bench-support.ts';

/**
 * Background responses surviving a replica's death: 1,000 `background: true`
 * responses started across two gateways (alternating) over one Redis, each
 * streamed slowly by a scripted upstream; once all are created and about half
 * stream, one gateway is killed with SIGKILL. Every response is then polled
 * on the survivor until it is terminal. Reports how many ended (all must:
 * the run exits non-zero otherwise), completed vs `response_owner_lost`, the
 * detection time (kill → last orphan seen failed; p50 per orphan), Redis
 * memory per response's event stream, and the total time against a floor
 * measured in the same run: the same 1,000 responses with no kill.
 *
 *   npm run bench:background
 *
 * (BENCH_RESPONSES, BENCH_CHUNKS, BENCH_CHUNK_MS, BACKGROUND_LEASE_MS to vary it.)
 */

const RESPONSES = Number(process.env.BENCH_RESPONSES ?? 1_000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20);
const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 150);
const LEASE_MS = Number(process.env.BACKGROUND_LEASE_MS ?? 2_000);
const CREATE_CONCURRENCY = 50;
const POLL_CONCURRENCY = 50;
/** A pass over the responses not yet terminal starts at most this often. */
const POLL_PASS_MS = 100;
const CAP_MS = 120_000;
const MEMORY_SAMPLE = 100;
const TERMINAL = new Set(['completed', 'failed', 'incomplete', 'cancelled']);

const children = new Set<ChildProcess>();

// ---------------------------------------------------------------------------
// The scripted upstream (this file run with --upstream, in its own process).

function runUpstream(): void {
  const frame = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bg', object: 'chat.completion.chunk', created: 1_760_000_000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const tail =
    frame({}, 'stop') +
    `data: ${JSON.stringify({ id: 'chatcmpl-bg', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS } })}\n\n` +
    'data: [DONE]\n\n';
  const stats = { started: 0, finished: 0, aborted: 0, active: 0 };
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(stats));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => (body += piece));
    req.on('end', () => {
      if (!body.includes('"stream":true')) {
        const completion = JSON.stringify({ id: 'chatcmpl-bg', object: 'chat.completion', created: 1_760_000_000, model: 'bench-model', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
        res.end(completion);
        return;
      }
      stats.started++;
      stats.active++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame({ role: 'assistant', content: '' }));
      let sent = 0;
      let done = false;
      const timer = setInterval(() => {
        res.write(frame({ content: sent === 0 ? 'Hello' : ` token${sent}` }));
        if (++sent < CHUNKS) return;
        clearInterval(timer);
        done = true;
        stats.finished++;
        stats.active--;
        res.end(tail);
      }, CHUNK_MS);
      res.on('close', () => {
        if (done) return;
        clearInterval(timer);
        stats.aborted++;
        stats.active--;
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

// ---------------------------------------------------------------------------
// The benchmark.

interface UpstreamStats {
  started: number;
  finished: number;
  aborted: number;
  active: number;
}

interface Gateway {
  name: string;
  child: ChildProcess;
  port: number;
  pool: Pool;
  /** Log lines at level error or above (pino JSON on stdout). */
  errors: string[];
  /** Lines saying an orphan was ended as failed. */
  reaped: number;
}

interface Tracked {
  id: string;
  owner: number;
  status: string;
  errorCode: string | null;
  /** performance.now() of the first poll that saw it terminal. */
  seenTerminalAt: number | null;
}

interface RunResult {
  totalMs: number;
  createMs: number;
  tracked: Tracked[];
  killAt: number | null;
  atKill: UpstreamStats | null;
  upstream: UpstreamStats;
  usedMemoryDelta: number;
  streamMean: number;
  bytesKeyMean: number;
  sampledStreams: number;
  meanEntries: number;
  gateways: Gateway[];
}

function startChild(args: string[], env: Record<string, string>, stdio: 'pipe' | 'ignore' = 'pipe'): ChildProcess {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', stdio, stdio] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startGateway(name: string, redisUrl: string, prefix: string, upstreamPort: number): Promise<Gateway> {
  const port = await freePort();
  const child = startChild(['src/main.ts'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    OPENAI_API_KEY: 'bench',
    LOG_LEVEL: 'warn',
    BACKGROUND_LEASE_MS: String(LEASE_MS),
  });
  const gateway: Gateway = { name, child, port, pool: new Pool(`http://127.0.0.1:${port}`, { connections: Math.max(CREATE_CONCURRENCY, POLL_CONCURRENCY) }), errors: [], reaped: 0 };
  for (const stream of [child.stdout!, child.stderr!]) {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (piece: string) => {
      buffered += piece;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.includes('ended as failed')) gateway.reaped++;
        let level = 0;
        try {
          level = (JSON.parse(line) as { level?: number }).level ?? 0;
        } catch {
          level = line.trim() ? 50 : 0; // not pino: a crash trace or the like
        }
        if (level >= 50 && gateway.errors.length < 20) gateway.errors.push(line.slice(0, 400));
      }
    });
  }
  await waitHealthy(port, '/readyz');
  return gateway;
}

async function stopGateway(gateway: Gateway): Promise<void> {
  await gateway.pool.destroy().catch(() => {});
  const child = gateway.child;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function upstreamStats(port: number): Promise<UpstreamStats> {
  return (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as UpstreamStats;
}

const minus = (a: UpstreamStats, b: UpstreamStats): UpstreamStats => ({ started: a.started - b.started, finished: a.finished - b.finished, aborted: a.aborted - b.aborted, active: a.active });

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)![1]);
}

async function runWorkers<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

async function run(kind: 'floor' | 'kill', redis: Redis, redisUrl: string, upstreamPort: number): Promise<RunResult> {
  const prefix = `bgbench-${kind}:`;
  const gateways = [await startGateway('A', redisUrl, prefix, upstreamPort), await startGateway('B', redisUrl, prefix, upstreamPort)];
  try {
    const memoryBefore = await usedMemory(redis);
    const upstreamBefore = await upstreamStats(upstreamPort);
    const body = JSON.stringify({ model: 'bench-model', input: 'Say hello slowly.', background: true });
    const tracked: Tracked[] = [];
    const started = performance.now();
    await runWorkers(
      Array.from({ length: RESPONSES }, (_, index) => index),
      CREATE_CONCURRENCY,
      async (index) => {
        const owner = index % 2;
        const response = await gateways[owner]!.pool.request({ method: 'POST', path: '/v1/responses', headers: { 'content-type': 'application/json' }, body });
        const text = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`create on ${gateways[owner]!.name}: status ${response.statusCode}: ${text.slice(0, 300)}`);
        const created = JSON.parse(text) as { id: string; status: string };
        if (created.status !== 'queued') throw new Error(`create answered status ${created.status}, not queued`);
        tracked[index] = { id: created.id, owner, status: created.status, errorCode: null, seenTerminalAt: null };
      },
    );
    const createMs = performance.now() - started;

    let killAt: number | null = null;
    let atKill: UpstreamStats | null = null;
    if (kind === 'kill') {
      // Halfway: every response created and about half of them streaming.
      const deadline = Date.now() + 30_000;
      while (minus(await upstreamStats(upstreamPort), upstreamBefore).started < RESPONSES / 2 && Date.now() < deadline) await sleep(20);
      const victim = gateways[1]!;
      const exited = new Promise((resolve) => victim.child.once('exit', resolve));
      victim.child.kill('SIGKILL');
      killAt = performance.now();
      await exited;
      await victim.pool.destroy().catch(() => {});
      atKill = minus(await upstreamStats(upstreamPort), upstreamBefore);
    }

    // Poll every response on the survivor (A) until each is terminal or the cap passes.
    const survivor = gateways[0]!;
    const cap = performance.now() + CAP_MS;
    let pending = tracked.filter((entry) => !TERMINAL.has(entry.status));
    while (pending.length > 0 && performance.now() < cap) {
      const passStarted = performance.now();
      await runWorkers(pending, POLL_CONCURRENCY, async (entry) => {
        const response = await survivor.pool.request({ method: 'GET', path: `/v1/responses/${entry.id}` });
        const text = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`GET ${entry.id}: status ${response.statusCode}: ${text.slice(0, 300)}`);
        const record = JSON.parse(text) as { status: string; error?: { code?: string } | null };
        entry.status = record.status;
        if (TERMINAL.has(record.status)) {
          entry.seenTerminalAt = performance.now();
          entry.errorCode = record.error?.code ?? null;
        }
      });
      pending = pending.filter((entry) => !TERMINAL.has(entry.status));
      const wait = POLL_PASS_MS - (performance.now() - passStarted);
      if (pending.length > 0 && wait > 0) await sleep(wait);
    }
    const lastTerminal = Math.max(...tracked.map((entry) => entry.seenTerminalAt ?? performance.now()));
    const totalMs = lastTerminal - started;
    const upstream = minus(await upstreamStats(upstreamPort), upstreamBefore);

    // Redis memory: event streams sampled with MEMORY USAGE, and used_memory's growth.
    const usedMemoryDelta = (await usedMemory(redis)) - memoryBefore;
    const streamKeys: string[] = [];
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}{e:*`, 'COUNT', 1_000);
      cursor = nextCursor;
      for (const key of keys) if (key.endsWith(':events') && streamKeys.length < MEMORY_SAMPLE) streamKeys.push(key);
    } while (cursor !== '0' && streamKeys.length < MEMORY_SAMPLE);
    let streamBytes = 0;
    let bytesKeyBytes = 0;
    let entries = 0;
    for (const key of streamKeys) {
      streamBytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      bytesKeyBytes += Number((await redis.call('MEMORY', 'USAGE', `${key}:bytes`, 'SAMPLES', '0')) ?? 0);
      entries += await redis.xlen(key);
    }
    const sampled = Math.max(1, streamKeys.length);
    return {
      totalMs,
      createMs,
      tracked,
      killAt,
      atKill,
      upstream,
      usedMemoryDelta,
      streamMean: streamBytes / sampled,
      bytesKeyMean: bytesKeyBytes / sampled,
      sampledStreams: streamKeys.length,
      meanEntries: entries / sampled,
      gateways,
    };
  } finally {
    await Promise.all(gateways.map(stopGateway));
  }
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function count(tracked: Tracked[], predicate: (entry: Tracked) => boolean): number {
  return tracked.filter(predicate).length;
}

async function main(): Promise<number> {
  const redisServer = await startRedisServer();
  children.add(redisServer.process);
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const upstream = startChild([fileURLToPath(import.meta.url), '--upstream'], { BENCH_CHUNKS: String(CHUNKS), BENCH_CHUNK_MS: String(CHUNK_MS) }, 'pipe');
  upstream.stderr!.pipe(process.stderr);
  const upstreamPort = Number(await firstLine(upstream));
  try {
    const floor = await run('floor', redis, redisServer.url, upstreamPort);
    await redis.flushall();
    const kill = await run('kill', redis, redisServer.url, upstreamPort);

    const f = (value: number, digits = 0) => value.toFixed(digits);
    const s = (milliseconds: number) => `${(milliseconds / 1000).toFixed(2)} s`;
    const lines: [string, string, string][] = [];
    const row = (label: string, a: string, b: string) => lines.push([label, a, b]);
    const ended = (r: RunResult) => count(r.tracked, (entry) => TERMINAL.has(entry.status));
    const completed = (r: RunResult) => count(r.tracked, (entry) => entry.status === 'completed');
    const lost = (r: RunResult) => count(r.tracked, (entry) => entry.status === 'failed' && entry.errorCode === 'response_owner_lost');
    const otherEnds = (r: RunResult) => count(r.tracked, (entry) => TERMINAL.has(entry.status) && entry.status !== 'completed' && !(entry.status === 'failed' && entry.errorCode === 'response_owner_lost'));
    const detections = kill.tracked.filter((entry) => entry.errorCode === 'response_owner_lost' && entry.seenTerminalAt !== null).map((entry) => entry.seenTerminalAt! - kill.killAt!);

    row('responses created (A/B alternating)', f(RESPONSES), f(RESPONSES));
    row('time to create all', s(floor.createMs), s(kill.createMs));
    row('ended terminal', f(ended(floor)), f(ended(kill)));
    row('  completed', f(completed(floor)), f(completed(kill)));
    row('  failed response_owner_lost', f(lost(floor)), f(lost(kill)));
    row('  other terminal', f(otherEnds(floor)), f(otherEnds(kill)));
    row('  of B (killed): completed / owner_lost', '-', `${count(kill.tracked, (e) => e.owner === 1 && e.status === 'completed')} / ${count(kill.tracked, (e) => e.owner === 1 && e.errorCode === 'response_owner_lost')}`);
    row('  of A (survivor): completed / failed', '-', `${count(kill.tracked, (e) => e.owner === 0 && e.status === 'completed')} / ${count(kill.tracked, (e) => e.owner === 0 && e.status === 'failed')}`);
    row('not terminal at the cap', f(RESPONSES - ended(floor)), f(RESPONSES - ended(kill)));
    row('upstream streams at kill: started/done/active', '-', kill.atKill ? `${kill.atKill.started}/${kill.atKill.finished}/${kill.atKill.active}` : '-');
    row('upstream streams: started/done/cut', `${floor.upstream.started}/${floor.upstream.finished}/${floor.upstream.aborted}`, `${kill.upstream.started}/${kill.upstream.finished}/${kill.upstream.aborted}`);
    row('orphans ended by the reaper (log lines)', f(floor.gateways[0]!.reaped + floor.gateways[1]!.reaped), f(kill.gateways[0]!.reaped));
    row('detection: kill → last orphan failed', '-', detections.length ? s(Math.max(...detections)) : '-');
    row('detection: p50 / min per orphan', '-', detections.length ? `${s(percentile(detections, 50))} / ${s(Math.min(...detections))}` : '-');
    row('total: first create → all terminal', s(floor.totalMs), s(kill.totalMs));
    row('event stream MEMORY USAGE, mean', `${f(floor.streamMean)} B (${floor.sampledStreams} keys)`, `${f(kill.streamMean)} B (${kill.sampledStreams} keys)`);
    row('  entries per stream, mean', f(floor.meanEntries, 1), f(kill.meanEntries, 1));
    row('  :bytes counter key, mean', `${f(floor.bytesKeyMean)} B`, `${f(kill.bytesKeyMean)} B`);
    row('used_memory delta / response (all keys)', `${f(floor.usedMemoryDelta / RESPONSES)} B`, `${f(kill.usedMemoryDelta / RESPONSES)} B`);

    console.log(`loopgate background benchmark — ${RESPONSES} background responses on 2 replicas over one Redis; node ${process.version}`);
    console.log(`BACKGROUND_LEASE_MS=${LEASE_MS} (renewal/reaper tick every ${Math.max(50, Math.floor(LEASE_MS / 5))} ms); upstream: ${CHUNKS} chunks ${CHUNK_MS} ms apart (~${s(CHUNKS * CHUNK_MS)}); polling on the survivor, concurrency ${POLL_CONCURRENCY}, a pass at most every ${POLL_PASS_MS} ms; cap ${s(CAP_MS)}`);
    const width = Math.max(...lines.map(([label]) => label.length));
    const widthA = Math.max('floor (no kill)'.length, ...lines.map(([, a]) => a.length));
    console.log(`${''.padEnd(width)}  ${'floor (no kill)'.padEnd(widthA)}  kill -9 B`);
    for (const [label, a, b] of lines) console.log(`${label.padEnd(width)}  ${a.padEnd(widthA)}  ${b}`);
    console.log(`ratio total time with kill / floor: ${(kill.totalMs / floor.totalMs).toFixed(2)}x`);

    let ok = true;
    for (const [name, result] of [['floor', floor], ['kill', kill]] as const) {
      for (const gateway of result.gateways) {
        if (gateway.errors.length > 0) console.log(`${name} run, gateway ${gateway.name}: ${gateway.errors.length} error line(s), first: ${gateway.errors[0]}`);
      }
      const stuck = result.tracked.filter((entry) => !TERMINAL.has(entry.status));
      if (stuck.length > 0) {
        ok = false;
        const byStatus = new Map<string, number>();
        for (const entry of stuck) byStatus.set(`${entry.status} (owner ${entry.owner === 0 ? 'A' : 'B'})`, (byStatus.get(`${entry.status} (owner ${entry.owner === 0 ? 'A' : 'B'})`) ?? 0) + 1);
        console.log(`FAIL ${name} run: ${stuck.length} response(s) not terminal after ${s(CAP_MS)}: ${[...byStatus].map(([key, n]) => `${n} ${key}`).join(', ')}; e.g. ${stuck.slice(0, 3).map((entry) => entry.id).join(', ')}`);
      }
    }
    if (completed(floor) !== RESPONSES) {
      ok = false;
      console.log(`FAIL floor run: ${completed(floor)} of ${RESPONSES} completed`);
    }
    return ok ? 0 : 1;
  } finally {
    redis.disconnect();
    upstream.kill('SIGTERM');
    await redisServer.stop();
  }
}

function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

if (process.argv.includes('--upstream')) {
  runUpstream();
} else {
  process.on('exit', killChildren);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  let code = 1;
  try {
    code = await main();
  } catch (error) {
    console.error('background bench failed:', error);
  }
  process.exit(code);
}
