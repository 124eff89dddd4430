import { isHostedToolChoice, type CreateResponseRequest, type TextFormatParam } from '../protocol/create-response-request.ts';
import type { EchoedTextFormat, EchoedToolChoice, ResponseResource } from '../protocol/response-resource.ts';
import { resolveToolChoice, type ResolvedToolChoice } from './resolve-tool-choice.ts';
import { reasoningSummaryOf } from './turn-request.ts';

/**
 * The response object as it stands before the model says anything: every
 * request setting echoed the way `ResponseResource` requires (no field
 * missing, defaults filled in), status `in_progress`, empty output.
 */
export function initialResponse(request: CreateResponseRequest, id: string, model: string, createdAt: number, toolChoice: ResolvedToolChoice | null = resolveToolChoice(request.tool_choice, [])): ResponseResource {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    completed_at: null,
    status: 'in_progress',
    incomplete_details: null,
    model,
    previous_response_id: request.previous_response_id ?? null,
    ...(request.conversation != null && { conversation: { id: typeof request.conversation === 'string' ? request.conversation : request.conversation.id } }),
    instructions: request.instructions ?? null,
    output: [],
    error: null,
    // ResponseResource.tools holds function tools only (the schema's `Tool` union); MCP servers are not echoed.
    tools: (request.tools ?? []).flatMap((tool) => (tool.type === 'function' ? [tool] : [])).map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    })),
    tool_choice: echoToolChoice(toolChoice),
    truncation: request.truncation ?? 'disabled',
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    text: {
      format: echoTextFormat(request.text?.format ?? null),
      ...(request.text?.verbosity != null && { verbosity: request.text.verbosity }),
    },
    top_p: request.top_p ?? 1,
    presence_penalty: request.presence_penalty ?? 0,
    frequency_penalty: request.frequency_penalty ?? 0,
    top_logprobs: request.top_logprobs ?? 0,
    temperature: request.temperature ?? 1,
    reasoning: { effort: echoedEffort(request.reasoning?.effort ?? null), summary: reasoningSummaryOf(request) },
    usage: null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    store: request.store ?? true,
    background: false,
    service_tier: request.service_tier ?? 'default',
    metadata: request.metadata ?? {},
    safety_identifier: request.safety_identifier ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
  };
}

/**
 * The effort as the OpenResponses schema can say it: OpenAI's `minimal` and
 * `max` (taken, and passed to the upstream as they came) are echoed as the
 * schema's nearest, `low` and `xhigh`, so every response stays valid.
 */
function echoedEffort(effort: NonNullable<CreateResponseRequest['reasoning']>['effort'] | null): string | null {
  if (effort === 'minimal') return 'low';
  if (effort === 'max') return 'xhigh';
  return effort ?? null;
}

/** The choice as it was resolved: the schema echoes function names (an MCP server's tools are the functions they are offered as). */
function echoToolChoice(choice: ResolvedToolChoice | null): EchoedToolChoice {
  if (choice === null) return 'auto';
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') return { type: 'function', name: choice.name };
  // The OpenResponses schema echoes no hosted form: forcing a hosted call is forcing a tool call.
  if (isHostedToolChoice(choice)) return 'required';
  return { type: 'allowed_tools', tools: choice.tools.map((tool) => ({ type: 'function', name: tool.name })), mode: choice.mode ?? 'auto' };
}

/** The schema echoes a json_schema format without its schema (`schema: null`). */
function echoTextFormat(format: TextFormatParam | null): EchoedTextFormat {
  if (format === null || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', name: format.name ?? 'response', description: format.description ?? null, schema: null, strict: format.strict ?? false };
}
