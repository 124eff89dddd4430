/**
 * `work`'s outcome, or a rejection with `expired()`'s error once `ms` pass
 * without one (`expired` runs then, to release what `work` holds). The timer
 * is cleared either way; a later rejection of `work` is handled by the race.
 */
export function withinTime<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
