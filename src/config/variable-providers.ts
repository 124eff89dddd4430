import { isPlainObject, type ConfigProblem } from './config-problem.ts';
import type { ConfigSources } from './config-sources.ts';
import { effectiveDefaultProvider } from './default-provider.ts';
import { ENVIRONMENT_VARIABLES } from './environment-variables.ts';

/** The configuration file's own providers, by name, before any variable applied: name → type. */
export type FileProviders = ReadonlyMap<string, string | null>;

export function fileProvidersOf(raw: Record<string, unknown>): FileProviders {
  const providers = isPlainObject(raw.providers) ? raw.providers : {};
  return new Map(Object.entries(providers).map(([name, provider]) => [name, isPlainObject(provider) && typeof provider.type === 'string' ? provider.type : null]));
}

/**
 * A provider variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …) configures
 * the provider of its fixed name, adding it when the file has none. Beside a
 * file with providers of its own that is rarely what the operator meant: a
 * key exported in the shell for other tools would add api.openai.com next to
 * the file's vLLM and take over every model name `models` does not list;
 * `ANTHROPIC_API_KEY` next to the file's Anthropic provider named `claude`
 * would add a second one while `claude` stays without a key. Both are
 * refused, saying what to write instead.
 */
export function checkVariableProviders(before: FileProviders, raw: Record<string, unknown>, env: NodeJS.ProcessEnv, sources: ConfigSources): ConfigProblem[] {
  if (before.size === 0) return [];
  const after = isPlainObject(raw.providers) ? raw.providers : {};
  const problems: ConfigProblem[] = [];
  for (const [name, variables] of addedProviders(before, after, env)) {
    const added = after[name];
    const type = isPlainObject(added) && typeof added.type === 'string' ? added.type : null;
    const subject = variables.join(' and ');
    const sameType = [...before].filter(([, fileType]) => fileType === type).map(([fileName]) => fileName);
    if (sameType.length > 0) {
      problems.push({
        source: variables[0]!,
        message: `${subject} ${variables.length > 1 ? 'add' : 'adds'} the provider ${JSON.stringify(name)}, but the configuration file's ${type} provider is ${sameType.map((fileName) => JSON.stringify(fileName)).join(', ')}, which gets nothing from it: name it ${JSON.stringify(name)} in the file for ${subject} to configure it, or give it its apiKey and baseUrl there and unset ${subject}`,
      });
      continue;
    }
    if (sources.isExplicit(['defaultProvider'])) continue;
    const defaultName = typeof raw.defaultProvider === 'string' ? raw.defaultProvider : 'openai';
    const fileDefault = effectiveDefaultProvider(defaultName, Object.fromEntries([...before].map(([fileName, fileType]) => [fileName, { type: fileType }])));
    const nowDefault = effectiveDefaultProvider(defaultName, after);
    if (fileDefault !== null && nowDefault === name) {
      problems.push({
        source: variables[0]!,
        message: `${subject} ${variables.length > 1 ? 'add' : 'adds'} the provider ${JSON.stringify(name)}, which would serve the model names "models" does not list in place of the file's ${JSON.stringify(fileDefault)}; set defaultProvider (DEFAULT_PROVIDER) to the provider that should serve them`,
      });
    }
  }
  return problems;
}

/** Providers the variables added (absent from the file), each with the variables that did. */
function addedProviders(before: FileProviders, after: Record<string, unknown>, env: NodeJS.ProcessEnv): Map<string, string[]> {
  const added = new Map<string, string[]>();
  for (const variable of ENVIRONMENT_VARIABLES) {
    if (!variable.creates || !env[variable.name]) continue;
    const name = variable.creates.path[variable.creates.path.length - 1];
    if (typeof name !== 'string' || before.has(name) || !Object.hasOwn(after, name)) continue;
    added.set(name, [...(added.get(name) ?? []), variable.name]);
  }
  return added;
}
