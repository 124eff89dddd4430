import type { McpTool } from './mcp-session-pool.ts';

/**
 * Which of an operator server's tools wait for the client's approval:
 * - `never`: none (the default);
 * - `always`: every one;
 * - `writes`: every tool not annotated `readOnlyHint: true`, so read-only tools run and the rest wait;
 * - `destructive`: only tools that may destroy — not read-only and not annotated `destructiveHint: false`.
 */
export type ApprovalMode = 'never' | 'always' | 'writes' | 'destructive';

/** A mode alone, or a mode (default `never`) with tools named as exceptions to it. */
export type OperatorApprovalSetting = ApprovalMode | { mode?: ApprovalMode; always?: readonly string[]; never?: readonly string[] };

/**
 * Whether a call to `tool` waits for approval. Named tools win over the mode;
 * the mode reads the tool's MCP annotations with MCP's own defaults
 * (`readOnlyHint` false, `destructiveHint` true), so a tool that says nothing
 * about itself is treated as one that writes and may destroy. Annotations are
 * the server's claims about its tools: the operator chose to trust this server.
 */
export function needsApproval(setting: OperatorApprovalSetting, tool: Pick<McpTool, 'name' | 'annotations'>): boolean {
  const { mode, always, never } = expand(setting);
  if (never.includes(tool.name)) return false;
  if (always.includes(tool.name)) return true;
  switch (mode) {
    case 'never':
      return false;
    case 'always':
      return true;
    case 'writes':
      return !isReadOnly(tool);
    case 'destructive':
      return !isReadOnly(tool) && tool.annotations?.destructiveHint !== false;
  }
}

/**
 * Whether the setting can make any tool wait. The tools of a server that can
 * are all shown as MCP items, the ones that run straight away too, so one
 * server's calls look alike and each approval links to an `mcp_call`.
 */
export function gatesAnyTool(setting: OperatorApprovalSetting): boolean {
  const { mode, always } = expand(setting);
  return mode !== 'never' || always.length > 0;
}

function expand(setting: OperatorApprovalSetting): { mode: ApprovalMode; always: readonly string[]; never: readonly string[] } {
  if (typeof setting === 'string') return { mode: setting, always: [], never: [] };
  return { mode: setting.mode ?? 'never', always: setting.always ?? [], never: setting.never ?? [] };
}

export function isReadOnly(tool: Pick<McpTool, 'annotations'>): boolean {
  // Only a real `true` counts: a server's "true" string or 1 is not a promise to change nothing.
  return tool.annotations?.readOnlyHint === true;
}
