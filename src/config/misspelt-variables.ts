import type { ConfigProblem } from './config-problem.ts';
import { ENVIRONMENT_VARIABLES } from './environment-variables.ts';
import { editDistance } from './schema-introspection.ts';

/** What other tools call a setting loopgate reads under its own name (openai-python 0.x, LangChain and LiteLLM read OPENAI_API_BASE). */
const OTHER_TOOLS_NAMES: Readonly<Record<string, string>> = { OPENAI_API_BASE: 'OPENAI_BASE_URL' };

const KNOWN = ENVIRONMENT_VARIABLES.map((variable) => variable.name);
const normalize = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/**
 * Warnings for variables set in the environment that loopgate does not read
 * but almost certainly was meant to: another tool's name for one of its
 * settings, or a near miss of one of its own names (`OPENAI_BASEURL`,
 * `REDIS_URI`, `MAX_TURN`). A variable that is silently ignored otherwise
 * hides a misconfiguration until the gateway misbehaves. Only close matches
 * count (one edit for short names, two for long ones, any case or separator),
 * and none when the name meant is set too: then both serve their own tools.
 */
export function misspeltVariables(env: NodeJS.ProcessEnv): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '' || KNOWN.includes(name)) continue;
    const alias = OTHER_TOOLS_NAMES[name];
    const meant = alias ?? closestKnown(name);
    if (!meant || (env[meant] ?? '') !== '') continue;
    warnings.push({
      source: name,
      message: alias ? `${name} is set, but loopgate reads ${meant} for it (${name} is other tools' name): set ${meant}` : `${name} is set, but loopgate reads no such variable; did you mean ${meant}?`,
    });
  }
  return warnings;
}

function closestKnown(name: string): string | null {
  const target = normalize(name);
  const tolerance = target.length < 8 ? 1 : 2;
  let best: { name: string; distance: number } | null = null;
  for (const known of KNOWN) {
    const distance = editDistance(target, normalize(known));
    if (distance <= tolerance && (!best || distance < best.distance)) best = { name: known, distance };
  }
  return best?.name ?? null;
}
