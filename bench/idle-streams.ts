import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { rssOf } from './bench-support.ts';
import type { Target } from './load.ts';

/**
 * What open streams cost a server: `count` streaming requests for the model
 * `bench-hold`, which the scripted upstream answers with a first token and
 * then holds open. Opened in waves (a listen backlog holds a few hundred),
 * each counted once its first token arrived through the server; the server's
 * resident memory is sampled throughout, and the peak above the level before
 * is the figure. Every stream is then cut by the client.
 */

const WAVE = 250;
const SAMPLE_MS = 50;
const HOLD_MS = 500;

export interface IdleStreamFigures {
  streams: number;
  baselineBytes: number;
  peakBytes: number;
  /** Peak RSS above the baseline per 1,000 open streams, in MiB. */
  mibPerThousand: number;
}

export async function idleStreamMemory(target: Target & { pid: number }, port: number, count: number): Promise<IdleStreamFigures> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: count, keepAliveTimeout: 60_000 });
  const abort = new AbortController();
  const body = target.streamBody.replace('"model":"bench-model"', '"model":"bench-hold"');
  await sleep(500);
  const baselineBytes = rssOf(target.pid);
  let peakBytes = baselineBytes;
  const sampler = setInterval(() => (peakBytes = Math.max(peakBytes, rssOf(target.pid))), SAMPLE_MS);
  const open = async (): Promise<void> => {
    const response = await pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json' }, body, signal: abort.signal });
    if (response.statusCode !== 200) throw new Error(`${target.name}: an idle stream got status ${response.statusCode}: ${await response.body.text()}`);
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const onData = (piece: Buffer) => {
        seen += piece.toString();
        if (!seen.includes(target.firstTokenMarker)) return;
        seen = '';
        // Keep reading (keep-alive comments) without holding on to what arrives.
        response.body.off('data', onData);
        response.body.on('data', () => {});
        resolve();
      };
      response.body.on('data', onData);
      response.body.once('error', (error) => (abort.signal.aborted ? undefined : reject(error)));
      response.body.once('end', () => reject(new Error(`${target.name}: an idle stream ended early`)));
    });
  };
  try {
    for (let opened = 0; opened < count; opened += WAVE) {
      await Promise.all(Array.from({ length: Math.min(WAVE, count - opened) }, open));
    }
    await sleep(HOLD_MS);
    peakBytes = Math.max(peakBytes, rssOf(target.pid));
  } finally {
    clearInterval(sampler);
    abort.abort();
    await pool.destroy().catch(() => {});
    // Let the server notice the closed connections before anything else is measured.
    await sleep(500);
  }
  return { streams: count, baselineBytes, peakBytes, mibPerThousand: (peakBytes - baselineBytes) / 1024 / 1024 / (count / 1_000) };
}
