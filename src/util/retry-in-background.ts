/**
 * Runs `task` now and, while it fails, again every `everyMs` until `forMs`
 * have passed, in the background: for releasing what a lease holds (a
 * conversation's claim, an idempotency key) when the store was away at the
 * moment — the lease would free it at its end, but a store back sooner
 * should not leave clients refused until then. Resolves with the first
 * attempt's outcome; later attempts are nobody's to wait for.
 */
export function retryInBackground(task: () => Promise<unknown>, forMs: number, everyMs = 500): Promise<void> {
  const until = performance.now() + forMs;
  const again = (): void => {
    if (performance.now() + everyMs > until) return;
    setTimeout(() => void task().catch(again), everyMs).unref();
  };
  return task().then(
    () => {},
    (error: unknown) => {
      again();
      throw error;
    },
  );
}
