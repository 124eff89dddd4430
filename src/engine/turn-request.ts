import { isHostedToolChoice, type CreateResponseRequest } from '../protocol/create-response-request.ts';
import { HOSTED_INCLUDES } from '../protocol/hosted-tools.ts';
import type { TurnRequest } from '../providers/provider.ts';
import { resolveToolChoice, type ResolvedToolChoice } from './resolve-tool-choice.ts';

/** The reasoning summary asked for, by its name or by OpenAI's older one (`generate_summary`). */
export function reasoningSummaryOf(request: Pick<CreateResponseRequest, 'reasoning'>): TurnRequest['reasoningSummary'] {
  return request.reasoning?.summary ?? request.reasoning?.generate_summary ?? null;
}

/**
 * What one model call is asked, from the client's request and the
 * conversation the engine assembled; `toolChoice` is the request's, resolved
 * against the tools offered (resolve-tool-choice.ts).
 */
export function toTurnRequest(
  request: CreateResponseRequest,
  model: string,
  items: TurnRequest['items'],
  historyLength: number,
  tools: TurnRequest['tools'],
  hostedTools: TurnRequest['hostedTools'] = [],
  toolChoice: ResolvedToolChoice | null = resolveToolChoice(request.tool_choice, []),
): TurnRequest {
  return {
    model,
    instructions: request.instructions ?? null,
    items,
    historyLength,
    tools,
    hostedTools,
    hostedInclude: hostedTools.length > 0 ? (request.include ?? []).filter((value) => HOSTED_INCLUDES.test(value)) : [],
    // The engine has checked that a hosted choice names a tool among hostedTools (response-engine: checkHostedToolChoice).
    toolChoice: isHostedToolChoice(toolChoice) ? 'required' : toolChoice,
    hostedToolChoice: isHostedToolChoice(toolChoice) ? toolChoice : null,
    ...(hostedTools.length > 0 && request.max_tool_calls != null && { hostedToolCallBudget: request.max_tool_calls }),
    parallelToolCalls: request.parallel_tool_calls ?? null,
    textFormat: request.text?.format ?? null,
    verbosity: request.text?.verbosity ?? null,
    maxOutputTokens: request.max_output_tokens ?? null,
    temperature: request.temperature ?? null,
    topP: request.top_p ?? null,
    presencePenalty: request.presence_penalty ?? null,
    frequencyPenalty: request.frequency_penalty ?? null,
    ...(request.truncation === 'auto' && { truncation: 'auto' as const }),
    reasoningEffort: request.reasoning?.effort ?? null,
    reasoningSummary: reasoningSummaryOf(request),
    reasoningContext: request.reasoning?.context ?? null,
    reasoningMode: request.reasoning?.mode ?? null,
    topLogprobs: request.top_logprobs ?? null,
    logprobs: request.include?.includes('message.output_text.logprobs') === true || (request.top_logprobs ?? 0) > 0,
    encryptedReasoning: request.include?.includes('reasoning.encrypted_content') === true,
    safetyIdentifier: request.safety_identifier ?? null,
    promptCacheKey: request.prompt_cache_key ?? null,
    promptCache: { implicit: request.prompt_cache_options?.mode !== 'explicit', ttl: request.prompt_cache_options?.ttl ?? null, retention: request.prompt_cache_retention ?? null },
    serviceTier: request.service_tier ?? null,
    // A background response streams from its upstream whatever the client asked: its events are what pollers and resumed streams read.
    stream: request.stream === true || request.background === true,
  };
}
