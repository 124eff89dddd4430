import type { ChildProcess } from 'node:child_process';

/** Helpers shared by the benchmark scripts. */

export const ms = (value: number): string => `${value.toFixed(3)} ms`;

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** The first line a child prints on stdout (the benchmark servers print their port). */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (piece: string) => {
      buffered += piece;
      const newline = buffered.indexOf('\n');
      if (newline >= 0) resolve(buffered.slice(0, newline));
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
}

/** Resolves once `GET path` answers 2xx on the port. */
export async function waitHealthy(port: number, path = '/healthz'): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${path}`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing healthy on port ${port}`);
}
