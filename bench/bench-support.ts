import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * A node process from the project root, with stdout piped (the benchmark
 * servers print their port) and its open-file limit raised to the hard limit
 * (open streams hold sockets). `exec` keeps the pid, so /proc figures are the
 * server's own.
 */
export function startNode(args: string[], env: Record<string, string>, nodeFlags: string[] = []): ChildProcess {
  const command = ['exec', JSON.stringify(process.execPath), ...[...nodeFlags, ...args].map((arg) => JSON.stringify(arg))].join(' ');
  return spawn('/bin/sh', ['-c', `ulimit -n "$(ulimit -Hn)" 2>/dev/null; ${command}`], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** Starts a benchmark server that prints its port (the scripted upstream, a forwarder), kept in `children` to be stopped at the end; resolves with the child and its port. */
export async function startPrintingPort(children: ChildProcess[], args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = startNode(args, env, nodeFlags);
  children.push(child);
  return { child, port: Number(await firstLine(child)) };
}

/** The open-file limits: this process's own (`soft`, inherited by a shell) and what children are raised to (`hard`). */
export function openFileLimits(): { soft: number; hard: number } {
  const [soft, hard] = spawnSync('/bin/sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8' }).stdout.trim().split('\n');
  const parse = (limit: string | undefined) => (limit === 'unlimited' ? Number.POSITIVE_INFINITY : Number(limit));
  return { soft: parse(soft), hard: parse(hard) };
}

/**
 * The CPU time (user + system) a process has used, in ms; null where /proc
 * cannot tell. Read in nanoseconds from each thread's `schedstat` where the
 * kernel keeps it: `stat` counts in ticks of 10 ms, which in a slice of a
 * second is a percent of error on its own; `stat` otherwise.
 */
export function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const onCpu = onCpuMsOf(pid);
    if (onCpu !== null) return onCpu;
    const { user, kernel } = cpuTimesIn(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return user + kernel;
  } catch {
    return null;
  }
}

/** Time on a CPU of all of a process's threads, in ms, from their `schedstat` (ns); null when the kernel does not keep it. */
function onCpuMsOf(pid: number): number | null {
  let nanoseconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let line: string;
    try {
      line = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile; without schedstat every read fails and the sum stays 0
    }
    nanoseconds += Number(line.slice(0, line.indexOf(' ')));
  }
  return nanoseconds > 0 ? nanoseconds / 1e6 : null;
}

/** CPU ms so far of a process: its main thread's user and kernel time, and all its other threads' together. */
export function cpuMsByThreadOf(pid: number): { mainUser: number; mainKernel: number; otherThreads: number } {
  const split = { mainUser: 0, mainKernel: 0, otherThreads: 0 };
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let times: { user: number; kernel: number };
    try {
      times = cpuTimesIn(readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8'));
    } catch {
      continue; // a thread that ended meanwhile
    }
    if (Number(task) === pid) {
      split.mainUser += times.user;
      split.mainKernel += times.kernel;
    } else split.otherThreads += times.user + times.kernel;
  }
  return split;
}

/** User and kernel time in ms from a /proc `stat` line: after the command name (which may hold spaces), the 12th and 13th fields, in clock ticks (100 per second on Linux). */
function cpuTimesIn(stat: string): { user: number; kernel: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, kernel: Number(fields[12]) * 10 };
}

/** A process's resident set size now, in bytes. */
export function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}
