import { invalidRequest } from '../errors/gateway-error.ts';
import { isHostedToolChoice, type FunctionToolChoice, type HostedToolChoice, type McpToolChoice, type ToolChoiceParam } from '../protocol/create-response-request.ts';
import type { UpstreamHostedToolType } from '../protocol/hosted-tools.ts';
import type { OfferedTool } from '../executors/tool-executor.ts';
import { modelToolName, type DeclaredTools } from './declared-tools.ts';

/** A `tool_choice` as providers take it: modes and function names, or a hosted tool. */
export type ResolvedToolChoice = FunctionToolChoice | HostedToolChoice;

type FunctionChoice = { type: 'function'; name: string };

/** What the request's hosted tools became for the serving upstream: offered to it (it runs them), or omitted by the operator's policy. */
type HostedToolsAtHand = Pick<DeclaredTools, 'hosted' | 'omitted'>;

const NO_HOSTED_TOOLS: HostedToolsAtHand = { hosted: [], omitted: [] };

/**
 * The request's `tool_choice` in the terms every provider speaks. An MCP
 * entry (`{type: "mcp", server_label, name?}`, alone or among
 * `allowed_tools`) names tools the gateway offers the model as functions
 * (`<server>__<tool>`), known only once the servers have listed them: it
 * becomes those functions. A server's whole set, chosen alone, is an
 * `allowed_tools` of them with mode `required`, as OpenAI reads it ("the
 * model must call one of this server's tools"). A hosted tool among
 * `allowed_tools` stays allowed where the upstream runs it and leaves with
 * the tool where the policy omits it; when nothing allowed is left, the
 * model may call no tool (`none`), and must not be made to (`required`: 400).
 *
 * Given `functions` (every function the model is offered: the request's and
 * the executors'), a choice naming a function that is not among them is a
 * 400, as with OpenAI, and so is `required` with nothing to call: the
 * upstream would otherwise be told to call a tool it was never given, or
 * not be told at all while the echo said it was.
 */
export function resolveToolChoice(choice: ToolChoiceParam | null | undefined, offered: Iterable<OfferedTool>, hosted: HostedToolsAtHand = NO_HOSTED_TOOLS, functions: readonly { name: string }[] | null = null): ResolvedToolChoice | null {
  if (choice === 'required' && functions?.length === 0 && hosted.hosted.length === 0) {
    const omitted = hosted.omitted.length > 0 ? ` (${hosted.omitted.join(', ')} left out: see "loopgate:omitted_tools")` : '';
    throw invalidRequest(`tool_choice 'required' needs tools for the model to call, and this request offers none${omitted}.`, 'tool_choice', 'invalid_value');
  }
  if (choice === null || choice === undefined || typeof choice === 'string' || isHostedToolChoice(choice)) return choice ?? null;
  switch (choice.type) {
    case 'function':
      return { ...choice, name: offeredName(choice.name, functions, 'tool_choice') };
    case 'mcp': {
      const functions = mcpFunctions(choice, [...offered], 'tool_choice');
      return choice.name ? functions[0]! : { type: 'allowed_tools', tools: functions, mode: 'required' };
    }
    case 'allowed_tools':
      return resolveAllowedTools({ ...choice, tools: choice.tools.map((tool, index) => (tool.type === 'function' ? { ...tool, name: offeredName(tool.name, functions, `tool_choice.tools[${index}]`) } : tool)) }, offered, hosted);
  }
}

/**
 * The name the model is offered a function a choice names (`where`) under:
 * the name itself, or, for a namespace's function named as the Agents SDK
 * names it (`<namespace>.<name>`), its flattened name. It must be one the
 * model is offered (unchecked without `functions`).
 */
function offeredName(name: string, functions: readonly { name: string }[] | null, where: string): string {
  if (!functions || functions.some((tool) => tool.name === name)) return name;
  const dot = name.indexOf('.');
  const flat = dot > 0 ? modelToolName({ namespace: name.slice(0, dot), name: name.slice(dot + 1) }) : null;
  if (flat !== null && functions.some((tool) => tool.name === flat)) return flat;
  throw invalidRequest(`${where} names the function '${name}', which is not among the tools offered to the model (the request's tools and its MCP servers' tools, a namespace's functions as <namespace>.<name> or <namespace>__<name>).`, `${where}.name`, 'invalid_value');
}

function resolveAllowedTools(choice: Extract<ToolChoiceParam, { type: 'allowed_tools' }>, offered: Iterable<OfferedTool>, hosted: HostedToolsAtHand): ResolvedToolChoice {
  if (choice.tools.every((tool) => tool.type === 'function')) return choice as FunctionToolChoice;
  const tools = [...offered];
  const functions: FunctionChoice[] = [];
  const allowedHosted: UpstreamHostedToolType[] = [];
  choice.tools.forEach((tool, index) => {
    const param = `tool_choice.tools[${index}]`;
    if (tool.type === 'function') functions.push(tool);
    else if (tool.type === 'mcp') functions.push(...mcpFunctions(tool, tools, param));
    else if (hosted.hosted.some((entry) => entry.type === tool.type)) allowedHosted.push(tool.type as UpstreamHostedToolType);
    else if (!hosted.omitted.includes(tool.type)) throw invalidRequest(`${param} names the hosted tool '${tool.type}', which is not in tools.`, `${param}.type`, 'invalid_value');
  });
  if (functions.length === 0 && allowedHosted.length === 0) {
    if (choice.mode !== 'required') return 'none';
    throw invalidRequest(`tool_choice requires a call to one of its allowed_tools, but none of them is offered to this model: ${choice.tools.map((tool) => tool.type).join(', ')} left out (see "loopgate:omitted_tools").`, 'tool_choice.tools', 'invalid_value');
  }
  return { type: 'allowed_tools', tools: functions, ...(allowedHosted.length > 0 && { hosted: allowedHosted }), ...(choice.mode && { mode: choice.mode }) };
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

/**
 * The choice for model calls after the response's tools have run: one that
 * forces a tool (`required`, a named function, `allowed_tools` in `required`
 * mode) becomes `auto`, so the model can answer with what the tools gave it.
 * Forced on every call of the loop, a model that obeys makes a tool call
 * each turn until `max_turns` (and one using text tool calls is refused its
 * answer as "calls no tool"); the agent frameworks reset it after a tool call
 * for the same reason (the Agents SDK's `resetToolChoice`).
 */
export function choiceAfterToolsRan(choice: FunctionToolChoice | null): FunctionToolChoice | null {
  if (choice === 'required') return 'auto';
  if (typeof choice === 'object' && choice !== null) {
    if (choice.type === 'function') return 'auto';
    if (choice.type === 'allowed_tools' && choice.mode === 'required') return { ...choice, mode: 'auto' };
  }
  return choice;
}
