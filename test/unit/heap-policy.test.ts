import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * heap-policy.ts keeps one of Node's tick objects alive, so that the map
 * `process.nextTick` builds them along survives full collections: once it
 * was dropped, every later `nextTick` in the gateway built its object through
 * the runtime, property by property (about 3% of a response's CPU under
 * load, measured with `perf`). Run in a process of its own, with the gateway
 * built and a full collection made, as under load.
 */
describe('the heap policy', () => {
  it("keeps a tick object alive whose map new tick objects still have after a full collection", () => {
    const script = fileURLToPath(new URL('../fixtures/heap-policy/tick-map-after-gc.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({ held: true, sameMap: true });
  });
});
