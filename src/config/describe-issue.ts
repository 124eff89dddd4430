import type { z } from 'zod';
import { valueAt, type ConfigPath, type ConfigProblem } from './config-problem.ts';
import type { ConfigSources } from './config-sources.ts';
import { describeSchema, schemaAt } from './schema-introspection.ts';

/** Issues about a value's type or range, where "must be <what the schema wants>" says it all. */
const SAYS_WHAT_IT_MUST_BE = new Set(['invalid_type', 'too_big', 'too_small', 'invalid_value', 'not_multiple_of', 'invalid_union']);

/**
 * One zod issue as a problem an operator can act on: the variable or file
 * position, the key path, what the value must be and what it was.
 */
export function describeIssue(issue: z.core.$ZodIssue, raw: unknown, schema: z.ZodType, sources: ConfigSources): ConfigProblem {
  const path: ConfigPath = issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol');
  const value = valueAt(raw, path);
  const leaf = schemaAt(schema, path, raw);
  const expected = describeSchema(leaf);
  if (value === undefined) {
    return sources.problem(path, `is required${expected ? ` (${expected})` : ''}`);
  }
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator !== undefined) {
    const options = (issue as { options?: unknown[] }).options ?? [];
    return sources.problem(path, `must be ${options.map((option) => JSON.stringify(option)).join(' or ')}`, { value });
  }
  // A union that says in its own words what it takes (`listenHost`): those, not "a string or a string or a string".
  if (issue.code === 'invalid_union' && issue.message.startsWith('must ')) return sources.problem(path, issue.message, { value });
  if (issue.code === 'invalid_format' && leaf?.description) {
    return sources.problem(path, `must be ${leaf.description}`, { value });
  }
  // A string's or list's length is not what "must be a string" would describe.
  const aboutLength = (issue.code === 'too_small' || issue.code === 'too_big') && typeof value !== 'number';
  if (expected && SAYS_WHAT_IT_MUST_BE.has(issue.code) && !aboutLength) {
    return sources.problem(path, `must be ${expected}`, { value });
  }
  if (issue.code === 'too_small' && typeof value === 'string') {
    return sources.problem(path, `must be at least ${String(issue.minimum)} characters long`, { value });
  }
  return sources.problem(path, `is invalid (${issue.message})`, { value });
}
