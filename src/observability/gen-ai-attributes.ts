/**
 * The OpenTelemetry GenAI semantic conventions' names loopgate writes
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/). They are still in
 * development and have left `@opentelemetry/semantic-conventions` for their
 * own repository, so the names are kept here, in one place.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestPresencePenalty: 'gen_ai.request.presence_penalty',
  requestFrequencyPenalty: 'gen_ai.request.frequency_penalty',
  requestStream: 'gen_ai.request.stream',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  // Opt-in content (tracing.captureContent).
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolDefinitions: 'gen_ai.tool.definitions',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
} as const;

export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** MCP's conventions: the method of a tool call, on its `execute_tool` span. */
export const MCP_METHOD_NAME = 'mcp.method.name';

/** What only loopgate knows, under its own prefix. */
export const LOOPGATE = {
  tenant: 'loopgate.tenant',
  /** The configured provider's name (gen_ai.provider.name is the API family). */
  provider: 'loopgate.provider',
  upstreamModel: 'loopgate.upstream_model',
  responseStatus: 'loopgate.response.status',
  incompleteReason: 'loopgate.response.incomplete_reason',
  background: 'loopgate.background',
  previousResponseId: 'loopgate.previous_response_id',
  turn: 'loopgate.turn',
  executor: 'loopgate.tool.executor',
  /** The id a client finds a tool call under, where it differs from the model's call id (an `mcp_call` item's own). */
  toolItemId: 'loopgate.tool.item_id',
  deployment: 'loopgate.deployment',
  /** A span event on a routed alias's model call: one deployment refused the call before output, and routing moved on. */
  failoverEvent: 'loopgate.failover',
} as const;

/** `gen_ai.provider.name` of a provider type: the API each one speaks (an OpenAI-compatible server is `openai` to the conventions). */
export function genAiProviderName(type: string): string {
  switch (type) {
    case 'openai-chat':
    case 'openai-responses':
      return 'openai';
    case 'anthropic':
      return 'anthropic';
    case 'gemini':
      return 'gcp.gemini';
    default:
      return type;
  }
}
