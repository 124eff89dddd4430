import { GatewayError, invalidRequest } from '../../errors/gateway-error.ts';
import type { McpToolParam } from '../../protocol/create-response-request.ts';
import type { McpListToolsItem } from '../../protocol/output-items.ts';
import { newId } from '../../util/ids.ts';
import type { CallPresentation, OfferedTool, PreparedTools, ToolCall, ToolContext, ToolExecutor, ToolResult } from '../tool-executor.ts';
import { egressRefusalIn, type EgressPolicy } from './egress-policy.ts';
import { describeFailure, type McpServerTarget, type McpSessionPool, type McpTool } from './mcp-session-pool.ts';
import { gatesAnyTool, needsApproval, type OperatorApprovalSetting } from './operator-approval.ts';
import { OperatorToolCatalog, type CatalogLogger, type OperatorServerStatus } from './operator-tool-catalog.ts';
import { allowedByRequest, requestServerHeaders, requiresApproval } from './request-server-settings.ts';
import { joinedToolName } from '../../util/joined-tool-name.ts';

/** An MCP server the operator configured: its tools are offered to every request. */
export interface OperatorMcpServer {
  name: string;
  url: string;
  headers: Record<string, string>;
  allowedTools: string[] | null;
  timeoutMs: number | null;
  /** Which of its tools wait for the client's approval (none when absent); a request cannot change it. */
  requireApproval?: OperatorApprovalSetting;
}

interface McpTarget {
  server: McpServerTarget;
  toolName: string;
  timeoutMs: number;
  /** The output schema of the listing the tool was offered from. */
  outputCheck?: McpTool['outputCheck'];
}

/**
 * The name the model calls an MCP tool by: `<server>__<tool>`, made safe where
 * the tool's own name is not one models accept (`files.read`, `repo/list`).
 */
export function qualifiedToolName(server: string, tool: string): string {
  return joinedToolName(server, tool);
}
const NOTHING_OFFERED: PreparedTools = Object.freeze({ offered: [], items: [] }) as PreparedTools;

/**
 * Runs tools that live on MCP servers: the operator's (offered to every
 * request, shown as OpenAI's MCP items, or as plain function calls where
 * `mcp.callItems` says so and the server gates nothing) and those a request
 * names with `{type: "mcp"}` (shown as OpenAI's MCP items, approvals included).
 */
export class McpExecutor implements ToolExecutor {
  readonly kind = 'mcp';
  readonly #servers: ReadonlyMap<string, OperatorMcpServer>;
  readonly #catalog: OperatorToolCatalog;
  readonly #pool: McpSessionPool;
  readonly #egress: EgressPolicy;
  readonly #defaultTimeoutMs: number;
  readonly #attachImages: boolean;
  readonly #callItems: 'mcp' | 'function';

  constructor(options: {
    servers: readonly OperatorMcpServer[];
    pool: McpSessionPool;
    egress: EgressPolicy;
    /** Per-call timeout of MCP tools whose server sets none (`mcp.timeoutMs`). */
    defaultTimeoutMs: number;
    /** `attach`: images tools answer with reach the model as images (`mcp.images`); `describe`: as a line of text. */
    images?: 'attach' | 'describe';
    /** How operator servers' calls show: `mcp_call` items (the default) or `function_call` + `function_call_output` (`mcp.callItems`); gated servers always show MCP items. */
    callItems?: 'mcp' | 'function';
    log?: CatalogLogger;
    /** How operator servers' listings are kept (see OperatorToolCatalog); defaults suit tests and benches. */
    catalog?: { listTtlMs?: number; listWaitMs?: number; retryBaseMs?: number; retryMaxMs?: number };
  }) {
    this.#servers = new Map(options.servers.map((server) => [server.name, server]));
    this.#pool = options.pool;
    this.#egress = options.egress;
    this.#defaultTimeoutMs = options.defaultTimeoutMs;
    this.#attachImages = (options.images ?? 'attach') === 'attach';
    this.#callItems = options.callItems ?? 'mcp';
    this.#catalog = new OperatorToolCatalog(
      options.servers.map((server) => ({ name: server.name, target: { url: server.url, headers: server.headers, untrusted: false } })),
      {
        pool: options.pool,
        log: options.log ?? SILENT,
        listTtlMs: options.catalog?.listTtlMs ?? 300_000,
        listWaitMs: options.catalog?.listWaitMs ?? 500,
        retryBaseMs: options.catalog?.retryBaseMs ?? 1_000,
        retryMaxMs: options.catalog?.retryMaxMs ?? 60_000,
      },
    );
  }

  /** Starts listing the operator's servers in the background, so the first requests find their tools ready. */
  start(): void {
    this.#catalog.start();
  }

  /** Each operator server's state, for readiness. */
  status(): OperatorServerStatus[] {
    return this.#catalog.status();
  }

  close(): void {
    this.#catalog.close();
  }

  /** Calls reach this executor through the tools it offered; it takes no others. */
  canExecute(): boolean {
    return false;
  }

  /** `<server>__<tool>` of an operator server (shown as its offered tools are) or of a server the request names (always MCP items). */
  presentationOf(name: string, context: ToolContext): CallPresentation | null {
    const split = name.indexOf('__');
    if (split <= 0) return null;
    const [serverLabel, toolName] = [name.slice(0, split), name.slice(split + 2)];
    const operator = this.#servers.get(serverLabel);
    if (operator) return this.#showsAsMcp(operator) ? { kind: 'mcp', serverLabel, toolName, requiresApproval: false } : { kind: 'function' };
    if (context.mcpServers.some(({ tool }) => tool.server_label === serverLabel)) return { kind: 'mcp', serverLabel, toolName, requiresApproval: false };
    return null;
  }

  offersNothing(context: ToolContext): boolean {
    return this.#servers.size === 0 && context.mcpServers.length === 0;
  }

  async prepare(context: ToolContext, _signal: AbortSignal): Promise<PreparedTools> {
    if (this.offersNothing(context)) return NOTHING_OFFERED;
    this.#refuseOperatorLabels(context);
    const [operator, requested] = await Promise.all([
      this.#offerOperatorServers(),
      Promise.all(context.mcpServers.map(({ tool, index }) => this.#offerRequestServer(tool, index, context))),
    ]);
    const offered = [...operator.flat(), ...requested.flatMap((entry) => entry.offered)];
    refuseSharedNames(offered, context);
    return { offered, items: requested.flatMap((entry) => (entry.listing ? [entry.listing] : [])) };
  }

  async execute(call: ToolCall, context: ToolContext, signal: AbortSignal): Promise<ToolResult> {
    const offered = context.offered.get(call.name);
    const target = offered?.executor === this ? (offered.target as McpTarget) : null;
    if (!target) return { output: JSON.stringify({ error: `No MCP tool is named '${call.name}'.` }), isError: true };
    const args = call.arguments ? (JSON.parse(call.arguments) as Record<string, unknown>) : {};
    const { serverLost, ...result } = await this.#pool.session(target.server, context.tenant).call(target.toolName, args, signal, target.timeoutMs, { trace: context.trace, attachImages: this.#attachImages, outputCheck: target.outputCheck });
    // An operator server that stopped answering is listed again now: gone, it is left out of requests (one warn line, /readyz says so) until it answers.
    if (serverLost && !target.server.untrusted) this.#catalog.recheck(target.server);
    return result;
  }

  /** What the catalog has now; an unavailable server offers nothing and the request goes on without it. */
  async #offerOperatorServers(): Promise<OfferedTool[]> {
    const listed = await this.#catalog.current();
    return listed.flatMap(({ name, target, tools }) => {
      const server = this.#servers.get(name)!;
      const approval = server.requireApproval ?? 'never';
      const gated = gatesAnyTool(approval);
      const asMcp = this.#showsAsMcp(server);
      return tools
        .filter((tool) => !server.allowedTools || server.allowedTools.includes(tool.name))
        .flatMap((tool) =>
          this.#offer(name, tool, target, server.timeoutMs, asMcp ? { kind: 'mcp', serverLabel: name, toolName: tool.name, requiresApproval: gated && needsApproval(approval, tool) } : { kind: 'function' }),
        );
    });
  }

  /** An operator server's calls show as MCP items when the operator asks for them (`mcp.callItems`) or the server gates any tool. */
  #showsAsMcp(server: OperatorMcpServer): boolean {
    return this.#callItems === 'mcp' || gatesAnyTool(server.requireApproval ?? 'never');
  }

  /**
   * A request-named server under an operator server's name would take over
   * its `<server>__<tool>` names, and with them the approvals the operator
   * asks for: the name is the operator's.
   */
  #refuseOperatorLabels(context: ToolContext): void {
    const labels = new Set<string>();
    for (const { tool, index } of context.mcpServers) {
      // Two servers under one label: their tools' names would collide, and one server's would be unreachable.
      if (labels.has(tool.server_label)) throw invalidRequest(`Two MCP servers are labelled '${tool.server_label}'; give each its own server_label.`, `tools[${index}].server_label`, 'duplicate_mcp_server_label');
      labels.add(tool.server_label);
      if (!this.#servers.has(tool.server_label)) continue;
      throw invalidRequest(
        `The server_label '${tool.server_label}' is the name of an MCP server this gateway provides to every request; give the server you name another label.`,
        `tools[${index}].server_label`,
        'mcp_server_label_reserved',
      );
    }
  }

  async #offerRequestServer(tool: McpToolParam, index: number, context: ToolContext): Promise<{ offered: OfferedTool[]; listing: McpListToolsItem | null }> {
    const param = `tools[${index}].server_url`;
    try {
      this.#egress.check(tool.server_url);
    } catch (error) {
      throw invalidRequest(`The MCP server URL for '${tool.server_label}' is not allowed: ${error instanceof Error ? error.message : String(error)}`, param, 'mcp_server_url_refused');
    }
    // Always through the egress fetch: an allowed server may still redirect somewhere that is not.
    const target: McpServerTarget = { url: tool.server_url, headers: requestServerHeaders(tool), untrusted: true };
    // A conversation lists a server once; continuations reuse the stored listing.
    const known = [...context.previousOutput].reverse().find((item): item is McpListToolsItem => item.type === 'mcp_list_tools' && item.server_label === tool.server_label && !item.error);
    let listing: McpListToolsItem | null = null;
    let tools: McpTool[];
    if (known) {
      tools = known.tools.map((entry) => ({ name: entry.name, description: entry.description ?? null, inputSchema: entry.input_schema, annotations: entry.annotations ?? null }));
    } else {
      try {
        tools = await this.#pool.session(target, context.tenant).tools();
      } catch (error) {
        const refusal = egressRefusalIn(error);
        if (refusal) throw invalidRequest(`The MCP server URL for '${tool.server_label}' is not allowed: ${refusal.message}`, param, 'mcp_server_url_refused');
        listing = { type: 'mcp_list_tools', id: newId('mcpl'), server_label: tool.server_label, tools: [], error: `Could not list the tools of '${tool.server_label}': ${describe(error)}` };
        return { offered: [], listing };
      }
      listing = {
        type: 'mcp_list_tools',
        id: newId('mcpl'),
        server_label: tool.server_label,
        tools: tools.map((entry) => ({
          name: entry.name,
          ...(entry.description !== null && { description: entry.description }),
          input_schema: entry.inputSchema,
          ...(entry.annotations !== null && { annotations: entry.annotations }),
        })),
      };
    }
    const offered = tools
      .filter((entry) => allowedByRequest(tool.allowed_tools, entry))
      .flatMap((entry) => this.#offer(tool.server_label, entry, target, null, { kind: 'mcp', serverLabel: tool.server_label, toolName: entry.name, requiresApproval: requiresApproval(tool.require_approval, entry) }, tool.server_description ?? null));
    return { offered, listing };
  }

  /** `serverDescription`: the request's `server_description` of its server, context the model reads before each of its tools' own (as a namespace's description is). */
  #offer(serverName: string, tool: McpTool, server: McpServerTarget, timeoutMs: number | null, presentation: OfferedTool['presentation'], serverDescription: string | null = null): OfferedTool[] {
    const name = qualifiedToolName(serverName, tool.name);
    const description = [serverDescription, tool.description].filter(Boolean).join('\n\n');
    const callTimeoutMs = timeoutMs ?? this.#defaultTimeoutMs;
    const target: McpTarget = { server, toolName: tool.name, timeoutMs: callTimeoutMs, ...(tool.outputCheck && { outputCheck: tool.outputCheck }) };
    return [{ definition: { type: 'function', name, ...(description && { description }), parameters: tool.inputSchema }, policyName: { server: serverName, tool: tool.name }, executor: this, presentation, target, timeoutMs: callTimeoutMs, serverUrl: server.url, ...(!server.untrusted && { operatorServer: serverName }) }];
  }
}

/**
 * Two servers' tools under one name for the model: `<server>__<tool>` joins
 * ambiguously when a label or a tool name holds `__` (a request's server
 * `ops__admin` with a tool `wipe` is `ops__admin__wipe`, as is the operator
 * server `ops`'s tool `admin__wipe`), and the later would silently take the
 * earlier's place, an operator server's approvals with it. A request whose
 * server would do that is refused, naming the server.
 */
function refuseSharedNames(offered: readonly OfferedTool[], context: ToolContext): void {
  // Only a request's own servers are refused; operator servers alone are the operator's to name (every request goes through here).
  if (context.mcpServers.length === 0) return;
  const owners = new Map<string, string>();
  for (const tool of offered) {
    const owner = tool.operatorServer ?? (tool.presentation.kind === 'mcp' ? tool.presentation.serverLabel : null);
    if (owner === null) continue;
    const earlier = owners.get(tool.definition.name);
    if (earlier === undefined) {
      owners.set(tool.definition.name, owner);
      continue;
    }
    if (earlier === owner) continue;
    const named = context.mcpServers.find(({ tool: server }) => server.server_label === owner) ?? context.mcpServers.find(({ tool: server }) => server.server_label === earlier);
    if (!named) continue;
    throw invalidRequest(
      `The MCP servers '${earlier}' and '${owner}' each have a tool the model would call '${tool.definition.name}' (a server's tools are offered as <server_label>__<tool>); give the server '${named.tool.server_label}' a label that does not make another server's tool names.`,
      `tools[${named.index}].server_label`,
      'mcp_tool_name_collision',
    );
  }
}

const SILENT: CatalogLogger = { info: () => {}, warn: () => {}, debug: () => {} };

/** A listing's failure as one line, naming the HTTP status where there was one (`HTTP 401 Unauthorized: …`), as an operator server's does. */
function describe(error: unknown): string {
  return error instanceof GatewayError ? error.message : describeFailure(error);
}
