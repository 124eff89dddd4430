import { z } from 'zod';

/**
 * A whole number in a query string, written as one (`25`, not `0x19`,
 * `2.5e1` or ` 25`, which `Number` would also read). An empty value is
 * no value: the SDKs send `starting_after=` for a `null` they were given.
 */
export function queryInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .regex(/^\d+$/, { error: (issue) => `expected a whole number, got ${JSON.stringify(issue.input)}` })
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .optional(),
  );
}
