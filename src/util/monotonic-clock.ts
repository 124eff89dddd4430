/**
 * Milliseconds on a clock that never steps: the wall clock's reading when
 * the process started, advanced by the monotonic clock since. For what
 * measures time passing inside one process — leases, TTLs, rate limits'
 * refills, keep-alives, waits — so that NTP stepping the wall clock back an
 * hour (or a VM's clock jumping forward on resume) neither locks a rate
 * limit for that hour nor expires everything at once. The wall clock
 * (`Date.now()`) stays for what is a date: `created_at`, the UTC day usage
 * is booked on, an HTTP date.
 */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}
