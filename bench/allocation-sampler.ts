import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/**
 * Preloaded into the gateway (`--import ./bench/allocation-sampler.ts`) by
 * bench/gateway-profile.ts with BENCH_ALLOCATIONS=1: V8's sampling heap
 * profiler counting every allocation, including objects the young and old
 * collections already freed (what `--heap-prof` leaves out, and what costs
 * a server its GC time). Sampling starts on SIGUSR2, after warm-up; the
 * profile is written to LOOPGATE_ALLOCATION_PROFILE as the process exits.
 * With LOOPGATE_ALLOCATION_SURVIVORS=1 only what outlived the young
 * collections is counted: what the gateway promotes to the old generation,
 * which costs far more per byte than what dies young.
 */
const file = process.env.LOOPGATE_ALLOCATION_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    session.post('HeapProfiler.startSampling', { samplingInterval: 2048, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.LOOPGATE_ALLOCATION_SURVIVORS !== '1' });
    sampling = true;
  });
  // The main-thread session answers synchronously, so the profile is out before the process is.
  process.on('exit', () => {
    if (!sampling) return;
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
