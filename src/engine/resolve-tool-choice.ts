import { invalidRequest } from '../errors/gateway-error.ts';
import { isHostedToolChoice, type FunctionToolChoice, type HostedToolChoice, type McpToolChoice, type ToolChoiceParam } from '../protocol/create-response-request.ts';
import type { OfferedTool } from '../executors/tool-executor.ts';

/** A `tool_choice` as providers take it: modes and function names, or a hosted tool. */
export type ResolvedToolChoice = FunctionToolChoice | HostedToolChoice;

type FunctionChoice = { type: 'function'; name: string };

/**
 * The request's `tool_choice` in the terms every provider speaks. An MCP
 * entry (`{type: "mcp", server_label, name?}`, alone or among
 * `allowed_tools`) names tools the gateway offers the model as functions
 * (`<server>__<tool>`), known only once the servers have listed them: it
 * becomes those functions. A server's whole set, chosen alone, is an
 * `allowed_tools` of them with mode `required`, as OpenAI reads it ("the
 * model must call one of this server's tools").
 */
export function resolveToolChoice(choice: ToolChoiceParam | null | undefined, offered: Iterable<OfferedTool>): ResolvedToolChoice | null {
  if (choice === null || choice === undefined || typeof choice === 'string' || isHostedToolChoice(choice)) return choice ?? null;
  switch (choice.type) {
    case 'function':
      return choice;
    case 'mcp': {
      const functions = mcpFunctions(choice, [...offered], 'tool_choice');
      return choice.name ? functions[0]! : { type: 'allowed_tools', tools: functions, mode: 'required' };
    }
    case 'allowed_tools': {
      if (!choice.tools.some((tool) => tool.type === 'mcp')) return choice as FunctionToolChoice;
      const tools = [...offered];
      const functions = choice.tools.flatMap((tool, index) => (tool.type === 'mcp' ? mcpFunctions(tool, tools, `tool_choice.tools[${index}]`) : [tool]));
      return { type: 'allowed_tools', tools: functions, ...(choice.mode && { mode: choice.mode }) };
    }
  }
}

/** The names `allowed_tools` permits; null when the choice limits nothing. */
export function allowedToolNames(choice: ResolvedToolChoice | null): Set<string> | null {
  return typeof choice === 'object' && choice?.type === 'allowed_tools' ? new Set(choice.tools.map((tool) => tool.name)) : null;
}

function mcpFunctions(entry: McpToolChoice, offered: readonly OfferedTool[], param: string): FunctionChoice[] {
  const ofServer = offered.filter((tool) => tool.presentation.kind === 'mcp' && tool.presentation.serverLabel === entry.server_label);
  if (ofServer.length === 0) {
    throw invalidRequest(
      `${param} names the MCP server '${entry.server_label}', which offers no tools to this request: name it in tools ({"type": "mcp", "server_label": "${entry.server_label}", "server_url": …}), and check that its allowed_tools leave some and that it answered its listing (see the mcp_list_tools item).`,
      `${param}.server_label`,
      'invalid_value',
    );
  }
  const named = entry.name ? ofServer.filter((tool) => tool.presentation.kind === 'mcp' && tool.presentation.toolName === entry.name) : ofServer;
  if (named.length === 0) throw invalidRequest(`${param} names the tool '${entry.name}' of the MCP server '${entry.server_label}', which offers no tool of that name to this request.`, `${param}.name`, 'invalid_value');
  return named.map((tool) => ({ type: 'function', name: tool.definition.name }));
}
