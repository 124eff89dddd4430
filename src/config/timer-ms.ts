import { z } from 'zod';

/** The longest delay Node keeps for a timer: anything longer fires at once (a TimeoutOverflowWarning, and a 1 ms timer). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A duration in milliseconds that some timer will wait: at most Node's
 * longest, so that a value meant as "practically never" (30 days) is a
 * start-up problem, not a timer that fires at once and closes every socket.
 */
export const timerMs = z.int().max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} (about 24.8 days), the longest delay a Node timer keeps`);
