import { isPlainObject, type ConfigProblem } from './config-problem.ts';
import type { ConfigSources } from './config-sources.ts';

/**
 * Old spellings of MCP server keys (snake_case, from OpenAI's request-side MCP
 * tool) and the camelCase the rest of the configuration uses. Still accepted,
 * with a warning.
 */
export const LEGACY_MCP_SERVER_KEYS: Readonly<Record<string, string>> = {
  allowed_tools: 'allowedTools',
  timeout_ms: 'timeoutMs',
  require_approval: 'requireApproval',
};

/** For the schema: an MCP server entry with its old spellings renamed (programmatic callers get no warning). */
export function renameLegacyMcpServerKeys(entry: unknown): unknown {
  if (!isPlainObject(entry) || !Object.keys(LEGACY_MCP_SERVER_KEYS).some((key) => key in entry)) return entry;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    const current = LEGACY_MCP_SERVER_KEYS[key];
    if (current === undefined) renamed[key] = value;
    else if (!(current in entry)) renamed[current] = value;
  }
  return renamed;
}

/**
 * Renames old spellings in `raw.mcp.servers` in place, with a warning naming
 * each; an entry giving both spellings of one key is a problem.
 */
export function upgradeLegacyKeys(raw: Record<string, unknown>, sources: ConfigSources): { problems: ConfigProblem[]; warnings: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const servers = isPlainObject(raw.mcp) ? raw.mcp.servers : undefined;
  if (!Array.isArray(servers)) return { problems, warnings };
  servers.forEach((server, index) => {
    if (!isPlainObject(server)) return;
    for (const [legacy, current] of Object.entries(LEGACY_MCP_SERVER_KEYS)) {
      if (!(legacy in server)) continue;
      const path = ['mcp', 'servers', index, legacy];
      if (current in server) {
        problems.push(sources.problem(path, `and ${current} are the same setting; give only ${current}`, { at: 'key' }));
        delete server[legacy];
        continue;
      }
      warnings.push(sources.problem(path, `is the old spelling of ${current}; it still works, but rename it`, { at: 'key' }));
      server[current] = server[legacy];
      delete server[legacy];
      sources.recordRename(['mcp', 'servers', index, current], path);
    }
  });
  return { problems, warnings };
}
