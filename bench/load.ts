import { Pool } from 'undici';
import { cpuMsOf } from './bench-support.ts';

/**
 * The load generator of the gateway benchmark: one undici pool per target in
 * this process, kept lean because it shares the machine's cores with the
 * servers it measures. Every figure is taken over targets in turns — request
 * by request, or in alternating slices — so drift on a shared machine falls
 * on all of them alike.
 */

export interface Target {
  name: string;
  pool: Pool;
  path: string;
  body: string;
  streamBody: string;
  /** Bytes that mark the first content token in this target's stream. */
  firstTokenMarker: string;
  /** The serving process, for its CPU time and memory. */
  pid?: number;
}

export const CONCURRENCY = 64;

export function poolFor(port: number): Pool {
  return new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, keepAliveTimeout: 60_000 });
}

/** One request; its latency in ms, or with `stream`, the time until the first content token arrived. */
export async function timeOne(target: Target, stream: boolean): Promise<number> {
  const started = performance.now();
  const response = await target.pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json' }, body: stream ? target.streamBody : target.body });
  if (response.statusCode !== 200) throw new Error(`${target.name}: status ${response.statusCode}: ${await response.body.text()}`);
  if (!stream) {
    await response.body.text();
    return performance.now() - started;
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
  return firstToken;
}

/** `count` sequential requests to each target, interleaved request by request; the samples per target, in the targets' order. */
export async function interleavedLatencies(targets: Target[], count: number, stream: boolean): Promise<number[][]> {
  const samples = targets.map(() => [] as number[]);
  for (let index = 0; index < count; index++) {
    for (const [position, target] of targets.entries()) samples[position]!.push(await timeOne(target, stream));
  }
  return samples;
}

/** Responses completed per second at `CONCURRENCY` over `durationMs`, and the serving process's CPU time per response meanwhile (µs; NaN without a pid). */
export async function loadSlice(target: Target, durationMs: number, stream = false): Promise<{ responses: number; seconds: number; cpuMs: number }> {
  const cpuBefore = cpuMsOf(target.pid);
  let responses = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const response = await target.pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json' }, body: stream ? target.streamBody : target.body });
        await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        if (response.statusCode === 200) responses++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuMsOf(target.pid);
  return { responses, seconds, cpuMs: cpuBefore === null || cpuAfter === null ? Number.NaN : cpuAfter - cpuBefore };
}

export interface LoadFigures {
  rps: number;
  /** CPU time of the serving process per response, in µs. */
  cpuMicros: number;
}

/** Load on each target in alternating slices (the order rotating by slice); per target the throughput and CPU per response over all its slices. */
export async function alternatingLoad(targets: Target[], slices: number, sliceMs: number, stream = false): Promise<LoadFigures[]> {
  const totals = targets.map(() => ({ responses: 0, seconds: 0, cpuMs: 0 }));
  for (let slice = 0; slice < slices; slice++) {
    for (let step = 0; step < targets.length; step++) {
      const position = (slice + step) % targets.length;
      const measured = await loadSlice(targets[position]!, sliceMs, stream);
      const total = totals[position]!;
      total.responses += measured.responses;
      total.seconds += measured.seconds;
      total.cpuMs += measured.cpuMs;
    }
  }
  return totals.map((total) => ({ rps: total.responses / total.seconds, cpuMicros: (total.cpuMs * 1000) / total.responses }));
}
