import type { McpToolParam } from '../../protocol/create-response-request.ts';
import { isReadOnly } from './operator-approval.ts';
import type { McpTool } from './mcp-session-pool.ts';

/**
 * What an MCP server named in a request (`{type: "mcp", …}`) asks of the
 * gateway beyond its URL, read as OpenAI reads it: the headers to connect
 * with, which of its tools are offered, and which wait for the client's
 * approval.
 */

type ToolFilter = Exclude<NonNullable<McpToolParam['allowed_tools']>, readonly string[]>;

/** The headers to connect with: the request's own, and its `authorization` token as a bearer unless they already hold an Authorization header. */
export function requestServerHeaders(tool: Pick<McpToolParam, 'headers' | 'authorization'>): Record<string, string> {
  const headers = tool.headers ?? {};
  if (!tool.authorization || Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  return { ...headers, Authorization: `Bearer ${tool.authorization}` };
}

/** Whether `allowed_tools` lets the model see the tool: all of them when unset (or a filter naming nothing). */
export function allowedByRequest(allowed: McpToolParam['allowed_tools'], tool: Pick<McpTool, 'name' | 'annotations'>): boolean {
  if (!allowed) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  return !namesSomething(allowed) || matches(allowed, tool);
}

/**
 * OpenAI's default: every call needs approval unless the request says
 * otherwise. A `never` filter exempts the tools it matches; an `always`
 * filter gates only those it matches; with neither matching, the default
 * holds (`{never: {tool_names: ["read"]}}` still gates every other tool).
 */
export function requiresApproval(setting: McpToolParam['require_approval'], tool: Pick<McpTool, 'name' | 'annotations'>): boolean {
  if (setting === undefined || setting === null || setting === 'always') return true;
  if (setting === 'never') return false;
  if (setting.never && namesSomething(setting.never) && matches(setting.never, tool)) return false;
  if (setting.always && namesSomething(setting.always)) return matches(setting.always, tool);
  return true;
}

function namesSomething(filter: ToolFilter): boolean {
  return (filter.tool_names !== undefined && filter.tool_names !== null) || (filter.read_only !== undefined && filter.read_only !== null);
}

/** Every criterion the filter gives holds for the tool: its name is listed, and it is (or is not) annotated read-only. */
function matches(filter: ToolFilter, tool: Pick<McpTool, 'name' | 'annotations'>): boolean {
  if (filter.tool_names && !filter.tool_names.includes(tool.name)) return false;
  if (filter.read_only !== undefined && filter.read_only !== null && isReadOnly(tool) !== filter.read_only) return false;
  return true;
}
