import { z } from 'zod';
import { UPSTREAM_HOSTED_TOOL_TYPES } from '../protocol/hosted-tools.ts';
import { providerBaseUrl } from './url-schemas.ts';
import { timerMs } from './timer-ms.ts';

/** The `providers.<name>` entries of the configuration: one schema per upstream API, and the parts they share. */

export const toolCallMode = z.enum(['native', 'text']);
export const textToolCallRetries = z.int().min(0).max(10);
export const structuredOutputMode = z.enum(['native', 'prompt']);
/** What a provider's models have unless a model in `models` says otherwise: their context window, how they call tools and answer in a text.format (providers/text-tool-calls/, providers/prompted-structured-output.ts). */
const providerModelDefaults = {
  /** Context window, in tokens, of the models this provider serves that configure none (`truncation: "auto"`). */
  contextWindow: z.int().positive().nullable().default(null),
  toolCalls: toolCallMode.default('native'),
  textToolCallRetries: textToolCallRetries.default(2),
  structuredOutput: structuredOutputMode.default('native'),
  /** `false`: the models take no images; images in tool outputs are described to them in a line of text instead (providers/no-vision-provider.ts). */
  vision: z.boolean().default(true),
};

/** A rate limit or quota: 0 refuses everything, null is no limit. */
export const rateLimit = z.int().min(0).nullable();

/**
 * A provider entry's own outbound limits (its API key's, as the upstream grants them), counted in the
 * rate-limit store every replica shares; routing skips a deployment at its limit (providers/routing/limited-provider.ts).
 */
const outboundLimits = {
  limits: z.object({ requestsPerMinute: rateLimit.default(null), tokensPerMinute: rateLimit.default(null), concurrentRequests: rateLimit.default(null) }).prefault({}),
};

/** How every HTTP provider reaches its upstream: pooled connections and the three time bounds of a request (providers/http-upstream.ts). */
const upstreamConnectionConfig = {
  connections: z.int().positive().default(256),
  connectTimeoutMs: timerMs.positive().default(10_000),
  firstByteTimeoutMs: timerMs.positive().default(300_000),
  idleTimeoutMs: timerMs.positive().default(300_000),
};

/** How an OpenAI-wire upstream takes its key and what every request's query carries; Azure OpenAI: `auth: "api-key"` and, for its dated APIs, `apiVersion` (providers/http-upstream.ts). */
const openAIEndpointConfig = {
  auth: z.enum(['bearer', 'api-key']).default('bearer'),
  apiVersion: z.string().min(1).nullable().default(null),
  queryParams: z.record(z.string(), z.string()).default({}),
};

const OpenAIChatProviderConfig = z.object({
  type: z.literal('openai-chat'),
  baseUrl: providerBaseUrl,
  apiKey: z.string().nullable().default(null),
  maxTokensField: z.enum(['max_completion_tokens', 'max_tokens']).default('max_completion_tokens'),
  /** Which server's rules earlier turns go back by: OpenAI's, or Mistral's (call ids of nine letters and digits, an assistant turn between tool results and a user message); `auto`: Mistral's for its models (providers/openai-chat/mistral-dialect.ts). */
  dialect: z.enum(['auto', 'openai', 'mistral']).default('auto'),
  /** The field earlier turns' reasoning goes back in: `reasoning_content` (DeepSeek, llama.cpp), `reasoning` (current vLLM, Ollama, Groq); `auto`: the one the server answers in (providers/openai-chat/reasoning-field.ts). */
  reasoningField: z.enum(['auto', 'reasoning_content', 'reasoning']).default('auto'),
  ...outboundLimits,
  ...openAIEndpointConfig,
  ...upstreamConnectionConfig,
  ...providerModelDefaults,
});

/** OpenAI's Responses API, called statelessly: the gateway's store keeps conversations. */
const OpenAIResponsesProviderConfig = z.object({
  type: z.literal('openai-responses'),
  baseUrl: providerBaseUrl.default('https://api.openai.com/v1'),
  apiKey: z.string().nullable().default(null),
  /** Let the upstream keep its answers too (`store: true`); off, reasoning comes back as `encrypted_content` instead. */
  upstreamStore: z.boolean().default(false),
  /** Ask for reasoning as `encrypted_content` (turn off for servers that reject the include). */
  encryptedReasoning: z.boolean().default(true),
  /** Offer freeform (`custom`) tools as they are, grammar included, as OpenAI does; off for servers that take function tools only (each is then a function with one string, as on every other upstream). */
  nativeCustomTools: z.boolean().default(true),
  ...outboundLimits,
  ...openAIEndpointConfig,
  /**
   * The hosted tools the upstream runs itself (`web_search`, `file_search`, …):
   * a request naming one has it offered upstream, its calls passed through.
   * Every one OpenAI runs by default; `[]` for servers that run none.
   */
  hostedTools: z
    .array(z.enum(UPSTREAM_HOSTED_TOOL_TYPES))
    .refine((types) => new Set(types).size === types.length, 'lists a hosted tool twice')
    .default([...UPSTREAM_HOSTED_TOOL_TYPES]),
  ...upstreamConnectionConfig,
  ...providerModelDefaults,
});

const AnthropicProviderConfig = z.object({
  type: z.literal('anthropic'),
  baseUrl: providerBaseUrl.default('https://api.anthropic.com'),
  apiKey: z.string().nullable().default(null),
  defaultMaxTokens: z.int().positive().default(8_192),
  /** `auto`: mark where Anthropic may cache the prompt (system or tools, and the conversation's end), as OpenAI caches by itself; `off`: send no marks. */
  promptCaching: z.enum(['auto', 'off']).default('auto'),
  timeoutMs: timerMs.positive().default(600_000),
  ...outboundLimits,
  ...upstreamConnectionConfig,
  ...providerModelDefaults,
});

const GeminiProviderConfig = z.object({
  type: z.literal('gemini'),
  /** The Gemini API's origin, or a Vertex-compatible endpoint serving the same paths. */
  baseUrl: providerBaseUrl.default('https://generativelanguage.googleapis.com'),
  apiKey: z.string().nullable().default(null),
  apiVersion: z.string().regex(/^[a-z0-9]+$/, 'an API version like v1beta').default('v1beta'),
  ...outboundLimits,
  ...upstreamConnectionConfig,
  ...providerModelDefaults,
});

export const ProviderConfig = z.discriminatedUnion('type', [OpenAIChatProviderConfig, OpenAIResponsesProviderConfig, AnthropicProviderConfig, GeminiProviderConfig]);
