import type { ConfigFile } from './config-file.ts';
import { formatPath, type ConfigPath, type ConfigProblem } from './config-problem.ts';
import { isSecretPath, maskRefusedValue } from './mask-secrets.ts';

/** An environment variable that set a value in the configuration. */
export interface AppliedVariable {
  name: string;
  path: ConfigPath;
  /** The variable's text as given (shown in messages unless secret). */
  text: string;
  /** How a place inside the variable's value is named, e.g. `MCP_SERVERS[0].url` (the default) or `API_KEYS key 1`. */
  subject?: (rest: ConfigPath) => string;
}

export interface ProblemOptions {
  /** The offending value, shown as `got …` unless it is a secret. */
  value?: unknown;
  /** Point at the key (unknown keys) or at its value (the default). */
  at?: 'key' | 'value';
}

const MAX_SHOWN_CHARS = 80;

/**
 * Remembers where each value came from — the file or an environment variable —
 * and says so in problems: `PORT must be …` for a variable,
 * `file:line:column: server.port must be …` for the file.
 */
export class ConfigSources {
  readonly #file: ConfigFile;
  readonly #variables: AppliedVariable[] = [];
  /** Keys renamed from an old spelling: where the file still has the old one. */
  readonly #renamed = new Map<string, ConfigPath>();

  constructor(file: ConfigFile) {
    this.#file = file;
  }

  get fileName(): string {
    return this.#file.path;
  }

  recordVariable(variable: AppliedVariable): void {
    this.#variables.push(variable);
  }

  recordRename(path: ConfigPath, originalPath: ConfigPath): void {
    this.#renamed.set(formatPath(path), originalPath);
  }

  /** The variable that set this path or one enclosing it (the most specific). */
  variableFor(path: ConfigPath): { variable: AppliedVariable; rest: ConfigPath } | null {
    let best: AppliedVariable | null = null;
    for (const variable of this.#variables) {
      const encloses = variable.path.length <= path.length && variable.path.every((segment, index) => segment === path[index]);
      if (encloses && (!best || variable.path.length >= best.path.length)) best = variable;
    }
    return best ? { variable: best, rest: path.slice(best.path.length) } : null;
  }

  /** Whether the operator set this value (in the file or the environment) rather than leaving the default. */
  isExplicit(path: ConfigPath): boolean {
    return this.variableFor(path) !== null || this.#file.has(this.#originalPath(path));
  }

  /** A problem about the value at `path`: `<where>: <subject> <predicate>[, got <value>]`. */
  problem(currentPath: ConfigPath, predicate: string, options: ProblemOptions = {}): ConfigProblem {
    const path = this.#originalPath(currentPath);
    const fromVariable = this.variableFor(path);
    const shown = 'value' in options && options.value !== undefined && !isSecretPath(path) ? `, got ${this.#show(options.value, fromVariable)}` : '';
    if (fromVariable) {
      const { variable, rest } = fromVariable;
      const subject = rest.length === 0 ? variable.name : (variable.subject?.(rest) ?? `${variable.name}${typeof rest[0] === 'string' ? '.' : ''}${formatPath(rest)}`);
      return { source: variable.name, message: `${subject} ${predicate}${shown}` };
    }
    const location = this.#file.locate(path, options.at ?? 'value') ?? this.#file.path;
    const subject = path.length > 0 ? formatPath(path) : 'the configuration';
    return { source: location, message: `${location}: ${subject} ${predicate}${shown}` };
  }

  #originalPath(path: ConfigPath): ConfigPath {
    for (let length = path.length; length > 0; length--) {
      const original = this.#renamed.get(formatPath(path.slice(0, length)));
      if (original) return [...original, ...path.slice(length)];
    }
    return path;
  }

  #show(value: unknown, fromVariable: { variable: AppliedVariable; rest: ConfigPath } | null): string {
    if (fromVariable && fromVariable.rest.length === 0) return JSON.stringify(maskRefusedValue(fromVariable.variable.text));
    const text = JSON.stringify(typeof value === 'string' ? maskRefusedValue(value) : value) ?? String(value);
    return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS - 1)}…` : text;
  }
}
