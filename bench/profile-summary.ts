import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The top of a V8 profile, as text to paste into an issue note: self time
 * per function (name, file:line, ms, share of busy time) and per package or
 * module, from a `.cpuprofile` (`node --cpu-prof`); self bytes likewise from
 * a `.heapprofile` (`node --heap-prof`: sampled objects still alive when the
 * profile was written).
 *
 *   node bench/profile-summary.ts file.cpuprofile [--top=20] [--from-us=N --to-us=N]
 *
 * `--from-us`/`--to-us` keep only samples in that window of the monotonic
 * clock (microseconds; `process.hrtime.bigint() / 1000n` in any process),
 * which is how bench/gateway-profile.ts leaves start-up and warm-up out.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

export interface SummaryOptions {
  top?: number;
  fromMicros?: number;
  toMicros?: number;
}

const root = fileURLToPath(new URL('..', import.meta.url));
/** Frames V8 reports without code of their own. */
const IDLE = '(idle)';

export function summarizeProfile(file: string, options: SummaryOptions = {}): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile | { head: HeapNode };
  if ('head' in profile) summarizeHeap(file, profile.head, options.top ?? 20);
  else summarizeCpu(file, profile, options);
}

function summarizeCpu(file: string, profile: CpuProfile, options: SummaryOptions): void {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  /** Native code (no script of its own) is shown with its nearest JavaScript caller, and charged to the nearest one outside Node's own modules (the package or project code that asked for it). */
  const callerOf = (id: number, outsideNode: boolean): CallFrame | undefined => {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const url = frames.get(at)!.url;
      if (url && !(outsideNode && url.startsWith('node:'))) return frames.get(at);
    }
    return undefined;
  };
  const selfMicros = new Map<number, number>();
  let at = profile.startTime;
  let windowStart = Number.POSITIVE_INFINITY;
  let windowEnd = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    at += profile.timeDeltas[index]!;
    if ((options.fromMicros !== undefined && at < options.fromMicros) || (options.toMicros !== undefined && at > options.toMicros)) continue;
    // A sample stands for the time until the next one.
    const duration = profile.timeDeltas[index + 1] ?? 0;
    const node = profile.samples[index]!;
    selfMicros.set(node, (selfMicros.get(node) ?? 0) + duration);
    windowStart = Math.min(windowStart, at);
    windowEnd = Math.max(windowEnd, at);
  }
  if (windowEnd === 0) throw new Error(`${file}: no samples in the window asked for (the profile spans ${profile.startTime}–${profile.endTime} µs)`);
  const byFunction = new Map<string, { frame: CallFrame; caller: CallFrame | undefined; owner: CallFrame | undefined; micros: number }>();
  for (const [node, micros] of selfMicros) {
    const frame = frames.get(node)!;
    const native = !frame.url && !frame.functionName.startsWith('(');
    const caller = native ? callerOf(node, false) : undefined;
    const owner = native ? callerOf(node, true) : undefined;
    const key = `${frame.functionName}\u0000${frame.url}\u0000${frame.lineNumber}\u0000${caller ? where(caller) : ''}\u0000${owner ? where(owner) : ''}`;
    const entry = byFunction.get(key) ?? { frame, caller, owner, micros: 0 };
    entry.micros += micros;
    byFunction.set(key, entry);
  }
  const idle = [...byFunction.values()].filter((entry) => entry.frame.functionName === IDLE).reduce((sum, entry) => sum + entry.micros, 0);
  const busy = [...byFunction.values()].reduce((sum, entry) => sum + entry.micros, 0) - idle;
  const top = options.top ?? 20;
  console.log(`${file}: ${((windowEnd - windowStart) / 1000).toFixed(0)} ms profiled, busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; shares are of busy time`);
  console.log(`top ${top} functions by self time:`);
  const functions = [...byFunction.values()].filter((entry) => entry.frame.functionName !== IDLE).sort((a, b) => b.micros - a.micros);
  for (const [rank, entry] of functions.slice(0, top).entries()) {
    const via = entry.owner && entry.owner !== entry.caller ? ` ← ${where(entry.owner)}` : '';
    const place = entry.caller ? `(native) ← ${where(entry.caller)}${via}` : where(entry.frame);
    console.log(`  ${String(rank + 1).padStart(2)}. ${(entry.micros / 1000).toFixed(1).padStart(8)} ms ${percent(entry.micros, busy)}  ${entry.frame.functionName || '(anonymous)'}  ${place}`);
  }
  printModules('self time (native code charged to the package or project folder calling it)', functions.map((entry) => ({ frame: entry.owner ?? entry.caller ?? entry.frame, amount: entry.micros })), busy, (micros) => `${(micros / 1000).toFixed(1).padStart(8)} ms`, top);
}

function summarizeHeap(file: string, head: HeapNode, top: number): void {
  const byFunction = new Map<string, { frame: CallFrame; bytes: number }>();
  const visit = (node: HeapNode) => {
    if (node.selfSize > 0) {
      const key = `${node.callFrame.functionName}\u0000${node.callFrame.url}\u0000${node.callFrame.lineNumber}`;
      const entry = byFunction.get(key) ?? { frame: node.callFrame, bytes: 0 };
      entry.bytes += node.selfSize;
      byFunction.set(key, entry);
    }
    for (const child of node.children) visit(child);
  };
  visit(head);
  const functions = [...byFunction.values()].sort((a, b) => b.bytes - a.bytes);
  const total = functions.reduce((sum, entry) => sum + entry.bytes, 0);
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1).padStart(9)} KiB`;
  // bench/allocation-sampler.ts names its profiles `*.allocations.heapprofile`: every allocation, freed ones included.
  const what = file.endsWith('.allocations.heapprofile') ? 'allocated over the window, freed objects included' : 'still alive when written';
  console.log(`${file}: ${kib(total).trim()} sampled, ${what}`);
  console.log(`top ${top} functions by self bytes:`);
  for (const [rank, entry] of functions.slice(0, top).entries()) {
    console.log(`  ${String(rank + 1).padStart(2)}. ${kib(entry.bytes)} ${percent(entry.bytes, total)}  ${entry.frame.functionName || '(anonymous)'}  ${where(entry.frame)}`);
  }
  printModules('self bytes', functions.map((entry) => ({ frame: entry.frame, amount: entry.bytes })), total, kib, top);
}

function printModules(what: string, entries: { frame: CallFrame; amount: number }[], total: number, format: (amount: number) => string, top: number): void {
  const byModule = new Map<string, number>();
  for (const entry of entries) byModule.set(moduleOf(entry.frame), (byModule.get(moduleOf(entry.frame)) ?? 0) + entry.amount);
  console.log(`top ${top} packages / modules by ${what}:`);
  for (const [name, amount] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${format(amount)} ${percent(amount, total)}  ${name}`);
}

const percent = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1).padStart(5)}%`;

function projectPath(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(root) ? path.slice(root.length) : path;
}

function where(frame: CallFrame): string {
  if (!frame.url) return '';
  return `${projectPath(frame.url).replace(/^.*node_modules\//, '')}:${frame.lineNumber + 1}`;
}

/** A package (`undici`, `@scope/name`), a Node module group (`node:internal/streams`), a project folder (`src/http`), or V8's own entries. */
function moduleOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const path = projectPath(frame.url);
  const packaged = path.includes('node_modules/') ? /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path.slice(path.lastIndexOf('node_modules/'))) : null;
  if (packaged) return packaged[1]!;
  if (path.startsWith('node:')) return path.split('/').slice(0, 2).join('/').replace(/\.js$/, '');
  const folders = path.split('/');
  return folders.length > 2 ? folders.slice(0, 2).join('/') : path;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, ...flags] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/profile-summary.ts file.cpuprofile|file.heapprofile [--top=20] [--from-us=N --to-us=N]');
    process.exit(2);
  }
  const flag = (name: string) => {
    const value = flags.find((candidate) => candidate.startsWith(`--${name}=`))?.split('=')[1];
    return value === undefined ? undefined : Number(value);
  };
  summarizeProfile(file, { top: flag('top') ?? 20, ...(flag('from-us') !== undefined && { fromMicros: flag('from-us')! }), ...(flag('to-us') !== undefined && { toMicros: flag('to-us')! }) });
}
