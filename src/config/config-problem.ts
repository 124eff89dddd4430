/** A location in the configuration: object keys and array indexes, outermost first. */
export type ConfigPath = readonly (string | number)[];

/** One thing wrong (or doubtful) in the configuration, said so an operator can act on it. */
export interface ConfigProblem {
  /** Where the value came from: an environment variable's name, or `file:line:column`. */
  source: string;
  /** One line naming the source first, e.g. `PORT must be an integer from 0 to 65535, got "abc"`. */
  message: string;
}

/** Thrown by `loadConfig` with every problem found, not just the first. */
export class ConfigurationError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(formatProblems(problems));
    this.name = 'ConfigurationError';
    this.problems = problems;
  }
}

/** `Invalid configuration (2 problems):` and one indented line per problem. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return [`invalid configuration (${count}):`, ...problems.map((problem) => `  ${problem.message}`)].join('\n');
}

/** `mcp.servers[0].url`: the spelling used in every message. */
export function formatPath(path: ConfigPath): string {
  let text = '';
  for (const segment of path) text += typeof segment === 'number' ? `[${segment}]` : text === '' ? segment : `.${segment}`;
  return text;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value at a path, or undefined where the path leaves the data. */
export function valueAt(raw: unknown, path: ConfigPath): unknown {
  let current = raw;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}
