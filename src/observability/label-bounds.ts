/** What any value outside a label's known set is counted as. */
export const OTHER = 'other';

/** The tool server label of tools no MCP server runs (other executors). */
export const NO_SERVER = 'none';

/** The tool server label of every MCP server a request named (their labels are the client's, unbounded). */
export const REQUEST_SERVER = 'request';

/**
 * Error codes upstream failures carry that are worth a series of their own:
 * the gateway's own (providers/upstream-errors.ts and the adapters) and the
 * common ones OpenAI-compatible servers, Anthropic and Google's APIs (their
 * status words, lower case: providers/gemini/gemini-errors.ts) pass through.
 * Anything else an upstream invents is `other`.
 */
const UPSTREAM_CODES = new Set([
  'upstream_error',
  'upstream_timeout',
  'upstream_unreachable',
  'upstream_connection_error',
  'upstream_auth_failed',
  'upstream_not_found',
  'upstream_overloaded',
  'upstream_invalid_response',
  'upstream_stream_truncated',
  'model_not_found',
  'context_length_exceeded',
  'invalid_tool_call',
  'rate_limit_exceeded',
  'rate_limit_error',
  'insufficient_quota',
  'overloaded_error',
  'invalid_request_error',
  'api_error',
  'server_error',
  'invalid_argument',
  'failed_precondition',
  'resource_exhausted',
  'internal',
  'unavailable',
  'deadline_exceeded',
]);

export interface LabelBoundsOptions {
  /** Model names a label may carry: the configured aliases and the default model. */
  models: Iterable<string>;
  providers: Iterable<string>;
  tenants: Iterable<string>;
  /** The operator's MCP server names (their tools are `<server>__<tool>`). */
  mcpServers: Iterable<string>;
}

/**
 * Keeps every label within what the configuration names, so no client can
 * grow the number of series: model names beyond the configured ones, tenants
 * beyond the API keys', upstream error codes beyond the known ones all
 * become `other`. Ids never become labels.
 */
export class LabelBounds {
  readonly #models: ReadonlySet<string>;
  readonly #providers: ReadonlySet<string>;
  readonly #tenants: ReadonlySet<string>;
  readonly #servers: ReadonlySet<string>;

  constructor(options: LabelBoundsOptions) {
    this.#models = new Set(options.models);
    this.#providers = new Set(options.providers);
    this.#tenants = new Set(options.tenants);
    this.#servers = new Set(options.mcpServers);
  }

  model(name: string): string {
    return this.#models.has(name) ? name : OTHER;
  }

  provider(name: string): string {
    return this.#providers.has(name) ? name : OTHER;
  }

  tenant(name: string): string {
    return this.#tenants.has(name) ? name : OTHER;
  }

  /**
   * The MCP server a tool call went to: an operator server by name, any server a request named as `request`, `none` for other
   * executors. Told by the call's tool, not read off its name: a request's server labelled `docs_` offers `docs___search`,
   * which an operator server `docs` would be credited with by its `docs__` prefix.
   */
  toolServer(operatorServer: string | null, executorKind: string): string {
    if (executorKind !== 'mcp') return NO_SERVER;
    return operatorServer !== null && this.#servers.has(operatorServer) ? operatorServer : REQUEST_SERVER;
  }

  upstreamCode(code: string): string {
    return UPSTREAM_CODES.has(code) ? code : OTHER;
  }
}
