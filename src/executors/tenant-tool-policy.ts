import { invalidRequest } from '../errors/gateway-error.ts';
import { AllowDenyList, parseUrl, serverUrlMatcher, toolNameMatcher, type AllowDenyConfig, type McpToolName } from './allow-deny-list.ts';
import type { ToolGovernance } from './tool-governance.ts';
import type { OfferedTool, ToolCall, ToolContext } from './tool-executor.ts';

/** One tenant's rules as configured (`tenants.<name>`). */
export interface TenantRulesConfig {
  /** Names the model calls server-side tools by (`<server>__<tool>` for MCP tools), `*` as a wildcard. */
  tools?: AllowDenyConfig;
  /** MCP server URLs, as origins or path prefixes, for operator servers and servers named in requests alike. */
  mcpServerUrls?: AllowDenyConfig;
}

/** The entry that applies to every tenant without one of its own. */
export const EVERY_TENANT = '*';

interface TenantRules {
  tools: AllowDenyList<string | McpToolName>;
  serverUrls: AllowDenyList<URL | null>;
}

const TOOL_REFUSED = "The gateway's tool policy does not allow this tool for this tenant; it was not run.";
const SERVER_REFUSED = "The gateway's tool policy does not allow this tool's MCP server for this tenant; it was not run.";

/**
 * Per-tenant allow and deny lists of server-side tools and MCP server URLs
 * (`tenants` in the configuration). A tenant's own entry replaces the `"*"`
 * entry rather than adding to it, so a tenant can be given more or less than
 * the rest; a tenant with neither is not restricted. Client-run tools are
 * not governed here: the gateway does not run them.
 */
export class TenantToolPolicy implements ToolGovernance {
  readonly #tenants: ReadonlyMap<string, TenantRules>;

  constructor(tenants: Readonly<Record<string, TenantRulesConfig>>) {
    this.#tenants = new Map(
      Object.entries(tenants).map(([tenant, config]) => [
        tenant,
        { tools: new AllowDenyList(config.tools ?? {}, toolNameMatcher), serverUrls: new AllowDenyList(config.mcpServerUrls ?? {}, serverUrlMatcher) },
      ]),
    );
  }

  checkRequest(context: ToolContext): void {
    const rules = this.#rulesOf(context.tenant);
    if (!rules) return;
    for (const { tool, index } of context.mcpServers) {
      if (!rules.serverUrls.permits(parseUrl(tool.server_url))) {
        throw invalidRequest(`The MCP server URL for '${tool.server_label}' is not allowed for this tenant by the gateway's tool policy.`, `tools[${index}].server_url`, 'mcp_server_url_refused');
      }
    }
  }

  offers(tool: OfferedTool, tenant: string): boolean {
    const rules = this.#rulesOf(tenant);
    return !rules || (rules.tools.permits(tool.policyName ?? tool.definition.name) && (tool.serverUrl === undefined || rules.serverUrls.permits(parseUrl(tool.serverUrl))));
  }

  check(call: ToolCall, context: ToolContext): string | null {
    const rules = this.#rulesOf(context.tenant);
    if (!rules) return null;
    const offered = context.offered.get(call.name);
    // Judged by the tool's own name, not the model's (shortened and hashed where it is long): a label of 60 characters must not step past `*__delete`.
    if (!rules.tools.permits(offered?.policyName ?? call.name)) return TOOL_REFUSED;
    const serverUrl = offered?.serverUrl;
    if (serverUrl !== undefined && !rules.serverUrls.permits(parseUrl(serverUrl))) return SERVER_REFUSED;
    return null;
  }

  #rulesOf(tenant: string): TenantRules | undefined {
    return this.#tenants.get(tenant) ?? this.#tenants.get(EVERY_TENANT);
  }
}
