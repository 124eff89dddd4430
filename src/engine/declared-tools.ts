import { invalidRequest } from '../errors/gateway-error.ts';
import { isHostedToolChoice, type ClientToolSearchParam, type CreateResponseRequest, type CustomToolParam, type FunctionToolParam, type LoadableToolParam, type ToolChoiceParam } from '../protocol/create-response-request.ts';
import { isUpstreamHostedToolType, type UpstreamHostedToolParam, type UpstreamHostedToolType } from '../protocol/hosted-tools.ts';
import type { ModelTool } from '../providers/provider.ts';
import { joinedToolName } from '../util/joined-tool-name.ts';

/** What happens to hosted tools the serving upstream does not run: left out of what the model sees (and reported), or refused. */
export type HostedToolPolicy = 'omit' | 'reject';

/** A call's name as the client knows it: the tool's own name, its namespace if it has one, and its kind when it is not a function. */
export interface ClientToolName {
  name: string;
  namespace?: string;
  /** `custom`: shown as `custom_tool_call`; `tool_search`: shown as `tool_search_call`. */
  kind?: 'custom' | 'tool_search';
}

/** The name the model calls a client-run tool search by. */
export const TOOL_SEARCH_NAME = 'tool_search';

/** The request's client-side tools, as the model is offered them. */
export interface DeclaredTools {
  /** Function tools for the model; a namespace's functions under `<namespace>__<name>`. */
  functions: ModelTool[];
  /** Model-facing name → how the client gets the call back, for namespaced and freeform tools. */
  namespaced: ReadonlyMap<string, ClientToolName>;
  /** Hosted tools the serving upstream runs itself, offered to it as the client named them. */
  hosted: UpstreamHostedToolParam[];
  /** Hosted tools left out (by type), for the response header and the log. */
  omitted: string[];
}

/** Whether the provider serving the request runs a hosted tool itself (`Provider.runsHostedTool`). */
export type RunsHostedTool = (type: UpstreamHostedToolType) => boolean;


/**
 * A freeform tool as a function for upstreams that only know functions: one
 * string parameter, `input`, carrying the text; its grammar or format is
 * described to the model.
 */
function customAsFunction(tool: CustomToolParam, name: string, namespaceDescription?: string | null): ModelTool {
  const format = tool.format?.type === 'grammar' ? `The input must follow this ${tool.format.syntax} grammar:\n${tool.format.definition}` : 'The input is free text.';
  const description = [namespaceDescription, tool.description].filter(Boolean).join('\n\n');
  return {
    type: 'function',
    name,
    description: [description, format].filter(Boolean).join('\n\n'),
    parameters: { type: 'object', properties: { input: { type: 'string', description: 'The raw input for the tool.' } }, required: ['input'], additionalProperties: false },
    strict: false,
    freeform: { description: description || null, format: tool.format ?? null },
  };
}

/** The name the model calls a client tool by: its own, or `<namespace>__<name>` (made safe and short where it must be: joined-tool-name.ts). */
export function modelToolName(tool: ClientToolName): string {
  return tool.namespace ? joinedToolName(tool.namespace, tool.name) : tool.name;
}

/**
 * Reads the request's `tools` into what the model is offered: function tools
 * as they are, each namespace's functions flattened under names that cannot
 * collide, freeform tools as functions with one string, a client-run tool
 * search as a function, hosted tools the upstream runs (`runsHosted`) as
 * they are, other hosted tools by the policy; MCP servers are the MCP
 * executor's. Tools marked `defer_loading` wait until a tool search of the
 * conversation loaded them (`loaded`); loaded tools are offered from then on.
 */
export function declareTools(tools: CreateResponseRequest['tools'], hostedPolicy: HostedToolPolicy, loaded: readonly LoadableToolParam[] = [], runsHosted: RunsHostedTool = () => false): DeclaredTools {
  if (!tools?.length && loaded.length === 0) return { functions: [], namespaced: new Map(), hosted: [], omitted: [] };
  const functions: ModelTool[] = [];
  const hosted: UpstreamHostedToolParam[] = [];
  const namespaced = new Map<string, ClientToolName>();
  const omitted: string[] = [];
  const loadedNames = new Set(loaded.map((tool) => tool.name));

  const declare = (tool: NonNullable<CreateResponseRequest['tools']>[number], param: string): void => {
    switch (tool.type) {
      case 'function':
        functions.push(tool);
        return;
      case 'custom':
        functions.push(customAsFunction(tool, tool.name));
        namespaced.set(tool.name, { name: tool.name, kind: 'custom' });
        return;
      case 'mcp':
        return;
      case 'namespace':
        tool.tools.forEach((inner) => {
          const name = modelToolName({ namespace: tool.name, name: inner.name });
          if (inner.type === 'custom') functions.push(customAsFunction(inner, name, tool.description));
          else {
            const description = [tool.description, inner.description].filter(Boolean).join('\n\n');
            functions.push({ ...inner, name, ...(description && { description }) });
          }
          namespaced.set(name, { namespace: tool.name, name: inner.name, ...(inner.type === 'custom' && { kind: 'custom' as const }) });
        });
        return;
    }
    if (tool.type === 'tool_search' && 'execution' in tool && tool.execution === 'client') {
      const search = tool as ClientToolSearchParam;
      const parameters = search.parameters ?? { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
      functions.push({ type: 'function', name: TOOL_SEARCH_NAME, description: search.description ?? 'Searches for more tools; the tools it finds are offered from then on.', parameters, strict: false });
      namespaced.set(TOOL_SEARCH_NAME, { name: TOOL_SEARCH_NAME, kind: 'tool_search' });
      return;
    }
    if (isUpstreamHostedToolType(tool.type) && runsHosted(tool.type)) {
      hosted.push(tool as UpstreamHostedToolParam);
      return;
    }
    if (hostedPolicy === 'reject') {
      throw invalidRequest(`The hosted tool '${tool.type}' cannot run behind this gateway for this model (its upstream does not run it, and the gateway is configured to refuse such tools rather than leave them out).`, `${param}.type`, 'unsupported_tool');
    }
    omitted.push(tool.type);
  };

  const listed = new Set<string>();
  const searches = (tools ?? []).filter((tool) => tool.type === 'tool_search');
  const clientSearches = searches.some((tool) => 'execution' in tool && tool.execution === 'client');
  (tools ?? []).forEach((tool, index) => {
    if ('name' in tool && typeof tool.name === 'string') listed.add(tool.name);
    if ('defer_loading' in tool && tool.defer_loading && !loadedNames.has((tool as { name: string }).name)) {
      // A deferred tool waits for the client's tool search to load it.
      if (clientSearches) return;
      // With no search at all, nothing could ever load it: the model would never see it.
      if (searches.length === 0) {
        throw invalidRequest(`The tool '${(tool as { name: string }).name}' is deferred (defer_loading: true), but no tool search can load it: add a tool search the client runs ({"type": "tool_search", "execution": "client"}), or leave defer_loading out.`, `tools[${index}].defer_loading`, 'invalid_value');
      }
      // The hosted search that would load it does not run here (left out, and said so): the tool is offered as it is, so it can still be called.
    }
    declare(tool, `tools[${index}]`);
  });
  for (const tool of loaded) if (!listed.has(tool.name)) declare(tool, 'tool_search_output');

  const clash = functions.find((tool, index) => functions.findIndex((other) => other.name === tool.name) !== index);
  if (clash) throw invalidRequest(`Two tools are offered to the model as '${clash.name}'; tool names must be unique.`, 'tools', 'duplicate_tool_name');
  return { functions, namespaced, hosted, omitted };
}

/**
 * A `tool_choice` naming a hosted tool holds only when that tool is offered
 * to the upstream (named in `tools`, and run by the upstream serving the
 * model): otherwise the model would be forced to call a tool it never sees.
 */
export function checkHostedToolChoice(choice: ToolChoiceParam | null | undefined, declared: DeclaredTools): void {
  if (!isHostedToolChoice(choice) || declared.hosted.some((tool) => tool.type === choice.type)) return;
  throw invalidRequest(`tool_choice names the hosted tool '${choice.type}', which is not offered to this model: it must be in tools, and the upstream serving the model must run it.`, 'tool_choice.type', 'invalid_value');
}
