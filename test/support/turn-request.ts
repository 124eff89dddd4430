import type { TurnRequest } from '../../src/providers/provider.ts';

/** A provider request with every setting at its neutral value, one user message, and the given overrides. */
export function turnRequest(overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    model: 'test-model',
    instructions: null,
    items: [{ type: 'message', role: 'user', content: 'hi' }],
    historyLength: 0,
    tools: [],
    hostedTools: [],
    hostedInclude: [],
    toolChoice: null,
    hostedToolChoice: null,
    parallelToolCalls: null,
    textFormat: null,
    verbosity: null,
    maxOutputTokens: null,
    temperature: null,
    topP: null,
    presencePenalty: null,
    frequencyPenalty: null,
    reasoningEffort: null,
    reasoningSummary: null,
    reasoningContext: null,
    reasoningMode: null,
    topLogprobs: null,
    logprobs: false,
    encryptedReasoning: false,
    safetyIdentifier: null,
    promptCacheKey: null,
    promptCache: { implicit: true, ttl: null, retention: null },
    serviceTier: null,
    stream: false,
    ...overrides,
  };
}
