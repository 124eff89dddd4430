import type { ConfigProblem } from './config-problem.ts';
import { ENVIRONMENT_VARIABLES } from './environment-variables.ts';
import { closestKey } from './schema-introspection.ts';

/** What other tools call a setting loopgate reads under its own name (openai-python 0.x, LangChain and LiteLLM read OPENAI_API_BASE). */
const OTHER_TOOLS_NAMES: Readonly<Record<string, string>> = { OPENAI_API_BASE: 'OPENAI_BASE_URL' };

const KNOWN = ENVIRONMENT_VARIABLES.map((variable) => variable.name);
/** Environment variables are many and mostly other programs': only a near miss counts (one edit in a short name, two in a long one). */
const NEAR_MISS = (length: number) => (length < 8 ? 1 : 2);

/**
 * Warnings for variables set in the environment that loopgate does not read
 * but almost certainly was meant to: another tool's name for one of its
 * settings, or a near miss of one of its own names (`OPENAI_BASEURL`,
 * `REDIS_URI`, `MAX_TURN`). A variable that is silently ignored otherwise
 * hides a misconfiguration until the gateway misbehaves. Only close matches
 * count (in any case, with or without separators), and none when the name
 * meant is set too: then each serves its own tool.
 */
export function misspeltVariables(env: NodeJS.ProcessEnv): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '' || KNOWN.includes(name)) continue;
    const alias = OTHER_TOOLS_NAMES[name];
    const meant = alias ?? closestKey(name, KNOWN, NEAR_MISS);
    if (!meant || (env[meant] ?? '') !== '') continue;
    warnings.push({
      source: name,
      message: alias ? `${name} is set, but loopgate reads ${meant} for it (${name} is other tools' name): set ${meant}` : `${name} is set, but loopgate reads no such variable; did you mean ${meant}?`,
    });
  }
  return warnings;
}

