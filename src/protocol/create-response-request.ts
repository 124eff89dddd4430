import { z } from 'zod';
import { LoopControlsParam } from './loop-controls-param.ts';
import { jsonSchemaObject } from './bounded-fields.ts';
import { HOSTED_TOOL_CHOICE_TYPES, UPSTREAM_HOSTED_TOOL_TYPES, UpstreamHostedToolParam, type UpstreamHostedToolType } from './hosted-tools.ts';
import { InputItem, ToolName } from './input-items.ts';
import { REQUEST_LIMITS } from './request-limits.ts';
import { UNSUPPORTED_PARAMETERS } from './unsupported-parameters.ts';
import { duplicateItemId } from './duplicate-item-id.ts';
import { refusedUnless } from './unsupported-field.ts';
import { Includable } from './includable.ts';


/**
 * `CreateResponseBody` of the OpenResponses schema, as zod. It accepts what the
 * schema accepts, plus two things every OpenAI SDK user sends and the OpenAI
 * API takes: `text.format` of type `json_object`, and reasoning effort `minimal`.
 */

/**
 * Who may call a tool (OpenAI's `allowed_callers`): the model directly, or a
 * program it writes (programmatic tool calling, which the gateway does not
 * run). A tool only a program may call could never be called here.
 */
const allowedCallers = refusedUnless(
  z.array(z.enum(['direct', 'programmatic'])).max(2).nullish(),
  (callers) => callers.length === 0 || callers.includes('direct'),
  "a tool only programs may call needs programmatic tool calling, which this gateway does not run; include 'direct'",
);
/** OpenAI's `async` tools, whose output may come in a later response: here every call's output is awaited in the response that made it. */
const asyncTool = refusedUnless(z.boolean().nullish(), (value) => !value, 'tools whose output comes in a later response are not supported; leave async unset or false');

export const FunctionToolParam = z.strictObject({
  type: z.literal('function'),
  name: ToolName,
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  parameters: jsonSchemaObject.nullish(),
  // OpenAI's API and openai-node take `boolean | null`; LangChain's bindTools sends null.
  strict: z.boolean().nullish(),
  /** Offered only once a client-run tool search has loaded it. */
  defer_loading: z.boolean().nullish(),
  /** What the function's string output holds (the Agents SDK sends a tool's output schema): for programs calling it; a Responses upstream gets it, the model is not shown it otherwise. */
  output_schema: jsonSchemaObject.nullish(),
  allowed_callers: allowedCallers,
  async: asyncTool,
});

/**
 * A freeform tool (Codex's `apply_patch`): the model writes plain text,
 * optionally following a grammar. Upstreams without such tools are offered a
 * function with one string parameter, `input`.
 */
export const CustomToolParam = z.strictObject({
  type: z.literal('custom'),
  name: ToolName,
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  format: z
    .discriminatedUnion('type', [
      z.strictObject({ type: z.literal('text') }),
      z.strictObject({ type: z.literal('grammar'), syntax: z.enum(['lark', 'regex']), definition: z.string().max(REQUEST_LIMITS.maxDescriptionChars) }),
    ])
    .nullish(),
  defer_loading: z.boolean().nullish(),
  allowed_callers: allowedCallers,
  async: asyncTool,
});

/** Functions grouped under a namespace (Codex's `multi_agent_v1`, …); calls carry `namespace` beside the function's own name. */
export const NamespaceToolParam = z.strictObject({
  type: z.literal('namespace'),
  name: ToolName,
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  tools: z.array(z.discriminatedUnion('type', [FunctionToolParam, CustomToolParam])).max(REQUEST_LIMITS.maxTools),
  defer_loading: z.boolean().nullish(),
});

/** What a client-run tool search may load (`tool_search_output.tools`). */
export const LoadableToolParam = z.discriminatedUnion('type', [FunctionToolParam, NamespaceToolParam, CustomToolParam]);
export type LoadableToolParam = z.infer<typeof LoadableToolParam>;

/** Tool search the client runs (`execution: "client"`): the model asks, the client answers with the tools to load. */
export const ClientToolSearchParam = z.strictObject({
  type: z.literal('tool_search'),
  execution: z.literal('client'),
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  parameters: jsonSchemaObject.nullish(),
});

/**
 * Tools OpenAI runs on its own servers (or asks the client to run: computer,
 * shell, apply_patch, hosted tool search). Those an upstream here runs
 * (hosted-tools.ts) are offered to it; the rest, and those its provider does
 * not run, follow the operator's policy (`loop.hostedTools`): left out of what
 * the model sees and reported, or refused.
 */
const OTHER_HOSTED_TOOL_TYPES = ['computer', 'computer_use_preview', 'local_shell', 'shell', 'apply_patch', 'tool_search', 'programmatic_tool_calling'] as const;
export const HOSTED_TOOL_TYPES = [...UPSTREAM_HOSTED_TOOL_TYPES, ...OTHER_HOSTED_TOOL_TYPES] as const;
/** A hosted tool no upstream here runs: only its type matters (it is omitted or refused), the rest is kept as sent. */
export const OtherHostedToolParam = z.object({ type: z.enum(OTHER_HOSTED_TOOL_TYPES) }).loose();
/** Any hosted tool: those an upstream may run checked for OpenAI's fields, the others by type. */
export const HostedToolParam = z.union([UpstreamHostedToolParam, OtherHostedToolParam]);

const mcpToolNames = z.array(z.string().max(REQUEST_LIMITS.maxIdChars)).max(REQUEST_LIMITS.maxTools);
/** Tools of an MCP server picked by name, or by whether the server annotates them read-only (`readOnlyHint`). */
const McpToolFilter = z.strictObject({ tool_names: mcpToolNames.nullish(), read_only: z.boolean().nullish() });

/** A remote MCP server named in the request (OpenAI-compatible). */
export const McpToolParam = z.strictObject({
  type: z.literal('mcp'),
  server_label: z.string().min(1).max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$'),
  server_url: z.string().min(1).max(REQUEST_LIMITS.maxUrlChars),
  server_description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).nullish(),
  headers: z.record(z.string().max(REQUEST_LIMITS.maxIdChars), z.string().max(REQUEST_LIMITS.maxUrlChars)).nullish(),
  /** An OAuth access token for the server: sent as `Authorization: Bearer …` (a header of that name in `headers` wins). */
  authorization: z.string().min(1).max(REQUEST_LIMITS.maxUrlChars).nullish(),
  allowed_tools: z.union([mcpToolNames, McpToolFilter]).nullish(),
  require_approval: z.union([z.enum(['always', 'never']), z.strictObject({ always: McpToolFilter.nullish(), never: McpToolFilter.nullish() })]).nullish(),
  allowed_callers: allowedCallers,
  // OpenAI's own connectors and tunnels, and MCP tools loaded by tool search: nothing here serves them.
  connector_id: refusedUnless(z.string().max(REQUEST_LIMITS.maxIdChars).nullish(), () => false, "OpenAI's connectors are not available here; name the server by server_url"),
  tunnel_id: refusedUnless(z.string().max(REQUEST_LIMITS.maxIdChars).nullish(), () => false, "OpenAI's tunnels are not available here; name a server_url the gateway can reach"),
  defer_loading: refusedUnless(z.boolean().nullish(), (value) => !value, "loading a server's tools through tool search is not supported; its tools are offered to the model directly"),
});

const SpecificFunction = z.strictObject({ type: z.literal('function'), name: z.string() });
/** A custom (freeform) tool named as OpenAI allows (the AI SDK sends it): the model is offered it as a function of the same name, so it is chosen as one. */
const SpecificCustom = z.strictObject({ type: z.literal('custom'), name: z.string() }).transform(({ name }) => ({ type: 'function' as const, name }));
const ToolChoiceMode = z.enum(['none', 'auto', 'required']);
/**
 * The tools of an MCP server named in the request (OpenAI's `ToolChoiceMcp`),
 * or one of them: the engine turns it into the functions those tools are
 * offered to the model as (engine/resolve-tool-choice.ts).
 */
const SpecificMcp = z.strictObject({ type: z.literal('mcp'), server_label: z.string().min(1).max(64), name: z.string().min(1).max(REQUEST_LIMITS.maxIdChars).nullish() });
/** A hosted tool among `allowed_tools` (the AI SDK lists them for `allowedTools`): allowed where the upstream runs it, left out with the tool where it is omitted. */
const AllowedHostedTool = z.strictObject({ type: z.enum(HOSTED_TOOL_TYPES) });
const AllowedTools = z.strictObject({
  type: z.literal('allowed_tools'),
  tools: z.array(z.discriminatedUnion('type', [SpecificFunction, SpecificCustom, SpecificMcp, AllowedHostedTool])).min(1).max(128),
  mode: ToolChoiceMode.optional(),
});
/** A hosted tool the model must use (OpenAI's `ToolChoiceTypes`): only for an upstream that runs it (engine checks that it is offered). */
const SpecificHostedTool = z.strictObject({ type: z.enum(HOSTED_TOOL_CHOICE_TYPES) });
export const ToolChoiceParam = z.union([ToolChoiceMode, z.discriminatedUnion('type', [SpecificFunction, SpecificCustom, AllowedTools, SpecificHostedTool, SpecificMcp])]);

const JsonSchemaFormat = z.strictObject({
  type: z.literal('json_schema'),
  name: z.string().max(64).regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$').optional(),
  description: z.string().max(REQUEST_LIMITS.maxDescriptionChars).optional(),
  schema: jsonSchemaObject.optional(),
  strict: z.boolean().nullish(),
});
export const TextFormatParam = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  JsonSchemaFormat,
]);

/** OpenAI's service tiers (`ServiceTier`), passed on to upstreams that have them. */
export const ServiceTierParam = z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']);

const Metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, 'at most 16 key-value pairs');

/**
 * Input items, each id at most once, as OpenAI requires ("Duplicate item
 * found with id …"): a conversation keeps one item per id, so the first of
 * two would drop out of its history while the model had seen both.
 */
const InputItems = z
  .array(InputItem)
  .max(REQUEST_LIMITS.maxInputItems)
  .superRefine((items, context) => {
    const duplicate = duplicateItemId(items);
    if (duplicate) context.addIssue({ code: 'custom', path: [duplicate.index, 'id'], message: `duplicate item found with id '${duplicate.id}' (also input[${duplicate.first}]); remove duplicate items from your input and try again`, params: { code: 'duplicate_item' } });
  });

/** OpenAI's ranges for the sampling parameters (a value outside is its 400 too); the fast path checks the same (parse-create-response-request.ts). */
export const SAMPLING_RANGES = {
  temperature: [0, 2],
  top_p: [0, 1],
  presence_penalty: [-2, 2],
  frequency_penalty: [-2, 2],
} as const satisfies Record<string, readonly [number, number]>;

const sampling = (name: keyof typeof SAMPLING_RANGES) => z.number().min(SAMPLING_RANGES[name][0]).max(SAMPLING_RANGES[name][1]).nullish();

/** OpenAI's `prompt_cache_options`. */
export const PromptCacheOptionsParam = z.strictObject({
  mode: z.enum(['implicit', 'explicit']).nullish(),
  ttl: z.enum(['30m', '12h']).nullish(),
  prewarm: z.boolean().nullish(),
  comparison_response_id: z.string().max(REQUEST_LIMITS.maxIdChars).nullish(),
});

export const CreateResponseRequest = z.strictObject({
  model: z.string().min(1).max(REQUEST_LIMITS.maxIdChars).nullish(),
  input: z.union([z.string().max(REQUEST_LIMITS.maxTextChars), InputItems]).nullish(),
  previous_response_id: z.string().max(REQUEST_LIMITS.maxIdChars).nullish(),
  /** A conversation (its id, or `{id}`): its items come before the input, and this response's items are added to it. */
  conversation: z.union([z.string().min(1).max(REQUEST_LIMITS.maxIdChars), z.strictObject({ id: z.string().min(1).max(REQUEST_LIMITS.maxIdChars) })]).nullish(),
  // Every value OpenAI defines; those about hosted tools the gateway does not run have nothing to include.
  include: z.array(Includable).nullish(),
  tools: z
    .array(z.union([z.discriminatedUnion('type', [FunctionToolParam, McpToolParam, NamespaceToolParam, CustomToolParam, ...UpstreamHostedToolParam.options]), ClientToolSearchParam, OtherHostedToolParam]))
    .max(REQUEST_LIMITS.maxTools)
    .superRefine(toolsWithinLimits)
    .nullish(),
  tool_choice: ToolChoiceParam.nullish(),
  metadata: Metadata.nullish(),
  text: z.strictObject({ format: TextFormatParam.nullish(), verbosity: z.enum(['low', 'medium', 'high']).nullish() }).nullish(),
  temperature: sampling('temperature'),
  top_p: sampling('top_p'),
  presence_penalty: sampling('presence_penalty'),
  frequency_penalty: sampling('frequency_penalty'),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_obfuscation: z.boolean().optional() }).nullish(),
  background: z.boolean().nullish(),
  max_output_tokens: z.int().min(16).nullish(),
  max_tool_calls: z.int().min(1).nullish(),
  reasoning: z
    .strictObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
      summary: z.enum(['concise', 'detailed', 'auto']).nullish(),
      /** OpenAI's older name for `summary`, still taken: read as `summary` when that is unset. */
      generate_summary: z.enum(['concise', 'detailed', 'auto']).nullish(),
      /** Which earlier reasoning the model is shown again (OpenAI's): given to a Responses upstream; the others are shown what they can read. */
      context: z.enum(['auto', 'current_turn', 'all_turns']).nullish(),
      /** OpenAI's execution mode (`standard`, `pro`): given to a Responses upstream; `standard` is what every other upstream does. */
      mode: z.string().min(1).max(REQUEST_LIMITS.maxIdChars).nullish(),
    })
    .nullish(),
  safety_identifier: z.string().max(64).nullish(),
  prompt_cache_key: z.string().max(64).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  instructions: z.string().max(REQUEST_LIMITS.maxTextChars).nullish(),
  store: z.boolean().nullish(),
  service_tier: ServiceTierParam.nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  // Accepted and ignored: they cannot change what the model answers (README, "What clients see").
  user: z.string().max(REQUEST_LIMITS.maxIdChars).nullish(),
  client_metadata: z.record(z.string(), z.unknown()).nullish(),
  prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
  // How the upstream may cache the prompt: honoured by Anthropic (its cache marks) and Responses upstreams; `comparison_response_id` (diagnostics) is accepted and ignored, `prewarm` refused (unsupported-parameters.ts).
  prompt_cache_options: PromptCacheOptionsParam.nullish(),
  /** `false`: prepare the state (input stored, MCP servers listed) without a model call (engine/prepared-state-provider.ts). */
  generate: z.boolean().nullish(),
  // The specification's way to extend a request: one optional, documented, prefixed field (openapi/loopgate-extensions.json).
  'loopgate:loop': LoopControlsParam.nullish(),
  // Known to OpenAI, not served here yet: a 400 naming them when set (unsupported-parameters.ts), never a silent drop.
  ...Object.fromEntries(UNSUPPORTED_PARAMETERS.map(({ name }) => [name, z.unknown().optional()])),
})
  // Like OpenAI's API: a parameter nobody defines is an error, not a silent drop.
  .strict();

/**
 * Each namespace's functions count as tools (a thousand namespaces of a
 * thousand functions are not a thousand tools), and MCP servers are counted
 * apart: each costs a connection.
 */
function toolsWithinLimits(tools: readonly { type: string; tools?: unknown }[], context: z.core.$RefinementCtx): void {
  const count = tools.reduce((total, tool) => total + (tool.type === 'namespace' && Array.isArray(tool.tools) ? tool.tools.length : 1), 0);
  if (count > REQUEST_LIMITS.maxTools) {
    context.addIssue({
      code: 'custom',
      message: `too many tools. Expected at most ${REQUEST_LIMITS.maxTools} tools, each function of a namespace counted, but got ${count} instead`,
      params: { code: 'array_above_max_length' },
    });
  }
  const servers = tools.filter((tool) => tool.type === 'mcp').length;
  if (servers > REQUEST_LIMITS.maxMcpServers) {
    context.addIssue({
      code: 'custom',
      message: `too many MCP servers. Expected at most ${REQUEST_LIMITS.maxMcpServers} tools of type 'mcp', but got ${servers} instead`,
      params: { code: 'array_above_max_length' },
    });
  }
}

export type CreateResponseRequest = z.infer<typeof CreateResponseRequest>;
export type FunctionToolParam = z.infer<typeof FunctionToolParam>;
export type McpToolParam = z.infer<typeof McpToolParam>;
export type NamespaceToolParam = z.infer<typeof NamespaceToolParam>;
export type CustomToolParam = z.infer<typeof CustomToolParam>;
export type ClientToolSearchParam = z.infer<typeof ClientToolSearchParam>;
export type HostedToolParam = z.infer<typeof HostedToolParam>;
export type ToolChoiceParam = z.infer<typeof ToolChoiceParam>;
/** A `tool_choice` naming a hosted tool (`{type: "web_search_preview"}`, …). */
export type HostedToolChoice = z.infer<typeof SpecificHostedTool>;
/** A `tool_choice` about the model's own (function) tools: what every provider is asked. */
export type FunctionToolChoice =
  | z.infer<typeof ToolChoiceMode>
  | z.output<typeof SpecificFunction>
  | {
      type: 'allowed_tools';
      tools: z.output<typeof SpecificFunction>[];
      mode?: z.infer<typeof ToolChoiceMode>;
      /** Hosted tools allowed beside the functions: only ever ones the serving upstream runs (a Responses upstream's), which it is told of. */
      hosted?: UpstreamHostedToolType[];
    };
/** A `tool_choice` naming an MCP server's tools, as the client sent it. */
export type McpToolChoice = z.infer<typeof SpecificMcp>;

export function isHostedToolChoice(choice: ToolChoiceParam | null | undefined): choice is HostedToolChoice {
  return typeof choice === 'object' && choice !== null && (HOSTED_TOOL_CHOICE_TYPES as readonly string[]).includes(choice.type);
}
export type TextFormatParam = z.infer<typeof TextFormatParam>;
