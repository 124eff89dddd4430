import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { freePort } from '../test/support/redis.ts';
import { firstLine, median, ms, percentile, waitHealthy } from './bench-support.ts';

/**
 * WebSocket against SSE, in one run, on the same gateway and upstream: a
 * 10-turn tool loop (nine turns end with a call of the client's `step` tool,
 * the tenth answers) driven by a client that answers each call at once —
 * over one socket (store=false, continued from the connection's memory),
 * and as ten HTTP streaming requests with previous_response_id (stored,
 * kept-alive connection). Reports the time to the first output item of each
 * turn and the whole loop's time.
 *
 *   npm run bench:websocket       (BENCH_QUICK=1 for a short run)
 */

const quick = process.env.BENCH_QUICK === '1';
const TURNS = 10;
const LOOPS = quick ? 30 : 200;
const WARMUP_LOOPS = quick ? 20 : 100;

type Event = Record<string, any> & { type: string };
interface Turn {
  firstOutputMs: number;
  final: Record<string, any>;
}
interface Transport {
  name: string;
  turn(body: Record<string, unknown>): Promise<Turn>;
  close(): void;
}

const TOOLS = [{ type: 'function', name: 'step', parameters: { type: 'object', properties: { n: { type: 'integer' } } } }];

/** One loop: the first request, then each call answered, until the response completes. */
async function loop(transport: Transport, store: boolean): Promise<{ totalMs: number; firstOutputMs: number[] }> {
  const started = performance.now();
  const firstOutputMs: number[] = [];
  let body: Record<string, unknown> = { model: 'bench-model', input: 'Run the steps.', tools: TOOLS, store };
  for (let index = 0; index < TURNS; index++) {
    const { firstOutputMs: first, final } = await transport.turn(body);
    firstOutputMs.push(first);
    const call = final.output.find((item: Record<string, unknown>) => item.type === 'function_call');
    if (!call) {
      if (index !== TURNS - 1) throw new Error(`loop ended after ${index + 1} turns: ${final.status}`);
      break;
    }
    body = { model: 'bench-model', tools: TOOLS, store, previous_response_id: final.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'ok' }] };
  }
  return { totalMs: performance.now() - started, firstOutputMs };
}

async function overSocket(port: number): Promise<Transport> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { perMessageDeflate: false });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let pending: { sentAt: number; first: number | null; resolve(turn: Turn): void; reject(error: Error): void } | null = null;
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as Event;
    if (!pending) return;
    if (event.type === 'response.output_item.added') pending.first ??= performance.now() - pending.sentAt;
    if (event.type === 'error') pending.reject(new Error(JSON.stringify(event)));
    else if (event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed') pending.resolve({ firstOutputMs: pending.first ?? NaN, final: event.response });
  });
  return {
    name: 'WebSocket (one socket, store=false)',
    turn: (body) =>
      new Promise<Turn>((resolve, reject) => {
        pending = { sentAt: performance.now(), first: null, resolve, reject };
        socket.send(JSON.stringify({ type: 'response.create', ...body }));
      }),
    close: () => socket.close(),
  };
}

function overSse(port: number): Transport {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  return {
    name: 'SSE (HTTP requests, previous_response_id)',
    async turn(body) {
      const sentAt = performance.now();
      const { body: stream, statusCode } = await pool.request({ method: 'POST', path: '/v1/responses', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
      if (statusCode !== 200) throw new Error(`status ${statusCode}: ${await stream.text()}`);
      let buffered = '';
      let first: number | null = null;
      let final: Record<string, any> | null = null;
      stream.setEncoding('utf8');
      for await (const piece of stream) {
        buffered += piece;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '))?.slice(6);
          if (!data || data === '[DONE]') continue;
          const event = JSON.parse(data) as Event;
          if (event.type === 'response.output_item.added') first ??= performance.now() - sentAt;
          if (event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed') final = event.response;
        }
      }
      if (!final) throw new Error('stream ended without a terminal event');
      return { firstOutputMs: first ?? NaN, final };
    },
    close: () => void pool.close(),
  };
}

async function measure(transport: Transport, store: boolean, loops: number): Promise<{ totals: number[]; firsts: number[] }> {
  const totals: number[] = [];
  const firsts: number[] = [];
  for (let index = 0; index < loops; index++) {
    const result = await loop(transport, store);
    totals.push(result.totalMs);
    firsts.push(...result.firstOutputMs);
  }
  return { totals, firsts };
}

async function main(): Promise<void> {
  const upstream = startChild(['bench/fake-upstream.ts'], { TOOL_TURNS: String(TURNS - 1) });
  const upstreamPort = Number(await firstLine(upstream));
  const gatewayPort = await freePort();
  const gateway = startChild(['src/main.ts'], { PORT: String(gatewayPort), HOST: '127.0.0.1', OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`, OPENAI_API_KEY: 'bench', LOG_LEVEL: 'warn' });
  try {
    await waitHealthy(gatewayPort);
    const socket = await overSocket(gatewayPort);
    const sse = overSse(gatewayPort);
    const socketStored: Transport = { ...socket, name: 'WebSocket (one socket, store=true)' };
    const runs: [Transport, boolean][] = [
      [socket, false],
      [socketStored, true],
      [sse, true],
    ];
    for (const [transport, store] of runs) await measure(transport, store, WARMUP_LOOPS);
    // Interleaved rounds, so drift on a noisy machine touches every transport alike.
    const results = new Map(runs.map(([transport]) => [transport.name, { totals: [] as number[], firsts: [] as number[] }]));
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      for (const [transport, store] of runs) {
        const { totals, firsts } = await measure(transport, store, Math.ceil(LOOPS / rounds));
        results.get(transport.name)!.totals.push(...totals);
        results.get(transport.name)!.firsts.push(...firsts);
      }
    }
    console.log(`${TURNS}-turn client tool loop, ${LOOPS} loops per transport (${TURNS * LOOPS} responses), one client, gateway on the memory store`);
    console.log('transport                                   | first output p50 | p99        | loop p50     | loop p99');
    for (const [name, { totals, firsts }] of results) {
      console.log(`${name.padEnd(43)} | ${ms(median(firsts)).padStart(16)} | ${ms(percentile(firsts, 99)).padStart(10)} | ${ms(median(totals)).padStart(12)} | ${ms(percentile(totals, 99))}`);
    }
    const ws = results.get(socket.name)!;
    const http = results.get(sse.name)!;
    console.log(`ratio WebSocket/SSE: first output ${(median(ws.firsts) / median(http.firsts)).toFixed(2)}×, whole loop ${(median(ws.totals) / median(http.totals)).toFixed(2)}×`);
    socket.close();
    sse.close();
  } finally {
    gateway.kill('SIGKILL');
    upstream.kill('SIGKILL');
  }
}

function startChild(args: string[], env: Record<string, string>): ChildProcess {
  const root = fileURLToPath(new URL('..', import.meta.url));
  return spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

await main();
process.exit(0);
