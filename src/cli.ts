import { parseArgs } from 'node:util';
import { VERSION } from './build-info.ts';
import { formatPath, formatProblems, valueAt, type ConfigProblem } from './config/config-problem.ts';
import { ENVIRONMENT_VARIABLES, type EnvironmentVariable } from './config/environment-variables.ts';
import { GatewayConfig, resolveConfig } from './config/load-config.ts';
import { maskSecrets } from './config/mask-secrets.ts';

/** What the gateway needs to start serving. */
export interface Startup {
  config: GatewayConfig;
  /** Doubtful settings that do not stop the start; log them. */
  warnings: ConfigProblem[];
  version: string;
}

/** Exit codes: 0 done, 1 invalid configuration, 2 a command line loopgate does not understand. */
const EXIT_INVALID_CONFIG = 1;
const EXIT_USAGE = 2;

const FLAGS = {
  'check-config': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/**
 * Reads the command line. `--help`, `--version` and `--check-config` answer and
 * exit; otherwise the configuration is resolved and returned for serving, or
 * every problem in it is written to stderr and the process exits 1. Only
 * `--check-config`'s JSON goes to stdout, which is otherwise the log stream.
 */
export async function startFromCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Startup> {
  let flags: { 'check-config'?: boolean; help?: boolean; version?: boolean };
  try {
    flags = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return exit(EXIT_USAGE, '', `loopgate: ${usageError(error)}\nRun loopgate --help for the flags and environment variables.\n`);
  }
  if (flags.help) return exit(0, helpText(), '');
  if (flags.version) return exit(0, `${VERSION}\n`, '');

  const resolution = resolveConfig(env);
  const warnings = resolution.warnings.map((warning) => `loopgate: warning: ${warning.message}\n`).join('');
  if (!resolution.ok) {
    const hint = flags['check-config'] ? '' : 'Check a configuration without starting: loopgate --check-config (npm start -- --check-config).\n';
    return exit(EXIT_INVALID_CONFIG, '', `${warnings}loopgate: ${formatProblems(resolution.problems)}\n${hint}`);
  }
  if (flags['check-config']) {
    return exit(0, `${JSON.stringify(maskSecrets(resolution.config), null, 2)}\n`, `${warnings}loopgate: the configuration is valid (${resolution.file} and the environment); secrets are masked above.\n`);
  }
  return { config: resolution.config, warnings: resolution.warnings, version: VERSION };
}

function usageError(error: unknown): string {
  const { code, message } = error as { code?: string; message: string };
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) return `unknown flag ${quoted}`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && quoted) return `unexpected argument ${JSON.stringify(quoted)}`;
  return message;
}

/** Writes, waits until both streams have taken it (pipes are asynchronous), then exits. */
function exit(code: number, stdout: string, stderr: string): Promise<never> {
  return new Promise(() => {
    process.stdout.write(stdout, () => process.stderr.write(stderr, () => process.exit(code)));
  });
}

export function helpText(): string {
  const width = Math.max(...ENVIRONMENT_VARIABLES.map((variable) => variable.name.length)) + 2;
  return `loopgate ${VERSION}: an OpenResponses gateway with a server-side agentic loop

Usage: loopgate [flag]          from a checkout: npm start -- [flag]

Flags:
  --check-config  validate the configuration, print it as JSON with secrets masked, and exit:
                  0 when valid, 1 with every problem listed on stderr
  -h, --help      show this help
  -v, --version   print the version

Configuration: the file LOOPGATE_CONFIG names (default config/loopgate.jsonc, where every key is
documented), then these environment variables on top. An empty variable counts as unset.

Environment variables:
${ENVIRONMENT_VARIABLES.map((variable) => `  ${variable.name.padEnd(width)}${variable.help}${annotation(variable)}`).join('\n')}
`;
}

/** ` [server.port, default 8080]`: where the variable lands and what applies without it. */
function annotation(variable: EnvironmentVariable): string {
  if (!variable.path) return '';
  const sample: Record<string, unknown> = {};
  if (variable.creates) setNested(sample, variable.creates.path, variable.creates.value);
  const fallback = valueAt(GatewayConfig.safeParse(sample).data, variable.path);
  const shown = Array.isArray(fallback) ? fallback.join(',') : fallback;
  const isShown = shown !== undefined && shown !== null && shown !== '';
  return ` [${formatPath(variable.path)}${isShown ? `, default ${String(shown)}` : ''}]`;
}

function setNested(target: Record<string, unknown>, path: readonly (string | number)[], value: unknown): void {
  let current = target;
  for (const segment of path.slice(0, -1)) current = (current[segment] ??= {}) as Record<string, unknown>;
  current[path[path.length - 1]!] = structuredClone(value);
}
