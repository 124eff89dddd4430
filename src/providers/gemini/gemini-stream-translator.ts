import { newId } from '../../util/ids.ts';
import type { TurnEvent, TurnFinish, TurnUsage } from '../provider.ts';
import { callArgumentsText } from './call-arguments.ts';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts';
import { encodeSignature } from './thought-signatures.ts';
import type { GeminiLogprobs, GeminiPart, GeminiResponse } from './gemini-wire.ts';

/**
 * Turns `GenerateContentResponse` chunks (or the one whole answer) into turn
 * events. Only the first candidate is read: the gateway never asks for more.
 * Gemini sends each function call whole in one part, so a call is a start and
 * one delta with its arguments. The usage of the last chunk that has one wins:
 * Gemini's counts are running totals.
 */
export class GeminiStreamTranslator {
  #usage: TurnUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 };
  #finishRaw: string | null = null;
  #blockReason: string | null = null;
  #hasToolCalls = false;
  #announced = false;
  readonly #usedIds = new Set<string>();
  /** Thought text since the last signature, kept to replay a signed thought part as it was. */
  #thought = '';
  /** A signature on the answer's text belongs to it; it is reported at the end, after the text. */
  #textSignature: string | null = null;

  /** Whether the upstream said the model is done (a finish reason, or a blocked prompt). */
  get finished(): boolean {
    return this.#finishRaw !== null || this.#blockReason !== null;
  }

  accept(chunk: GeminiResponse, out: TurnEvent[]): void {
    if (chunk.error) {
      out.push({ type: 'error', code: chunk.error.status?.toLowerCase() ?? 'upstream_error', message: chunk.error.message ?? 'The upstream reported an error.' });
      return;
    }
    if (!this.#announced && (chunk.responseId || chunk.modelVersion)) {
      this.#announced = true;
      out.push({ type: 'upstream.response', id: chunk.responseId ?? null, model: chunk.modelVersion ?? null });
    }
    if (chunk.usageMetadata) this.#usage = toUsage(chunk.usageMetadata);
    if (chunk.promptFeedback?.blockReason) this.#blockReason = chunk.promptFeedback.blockReason;
    const candidate = chunk.candidates?.[0];
    const from = out.length;
    for (const part of candidate?.content?.parts ?? []) this.#acceptPart(part, out);
    if (candidate?.logprobsResult?.chosenCandidates?.length) attachLogprobs(candidate.logprobsResult, out, from);
    if (candidate?.finishReason) this.#finishRaw = candidate.finishReason;
  }

  usageSoFar(): TurnUsage | null {
    return this.#usage.inputTokens > 0 || this.#usage.outputTokens > 0 ? this.#usage : null;
  }

  /** The closing events, once the stream ended with the model finished. */
  finish(out: TurnEvent[]): void {
    if (this.#textSignature) out.push({ type: 'reasoning.encrypted', value: encodeSignature({ part: 'text', signature: this.#textSignature }) });
    out.push({ type: 'usage', usage: this.#usage });
    const finish: TurnFinish = this.#blockReason ? { reason: 'content_filter', raw: this.#blockReason } : mapGeminiFinishReason(this.#finishRaw ?? 'STOP', this.#hasToolCalls);
    out.push({ type: 'finish', finish });
  }

  #acceptPart(part: GeminiPart, out: TurnEvent[]): void {
    if (part.thought) {
      if (part.text) {
        this.#thought += part.text;
        out.push({ type: 'reasoning.delta', delta: part.text });
      }
      if (part.thoughtSignature) {
        out.push({ type: 'reasoning.encrypted', value: encodeSignature({ part: 'thought', text: this.#thought, signature: part.thoughtSignature }) });
        this.#thought = '';
      }
      return;
    }
    if (part.functionCall) {
      const callId = this.#uniqueId(part.functionCall.id);
      this.#hasToolCalls = true;
      const args = callArgumentsText(part.functionCall.args ?? {});
      if (part.thoughtSignature) out.push({ type: 'reasoning.encrypted', value: encodeSignature({ part: 'call', callId, signature: part.thoughtSignature, name: part.functionCall.name, arguments: args }) });
      out.push({ type: 'tool_call.start', callId, name: part.functionCall.name });
      out.push({ type: 'tool_call.delta', callId, delta: args });
      return;
    }
    if (part.text) out.push({ type: 'text.delta', delta: part.text });
    if (part.thoughtSignature && part.text !== undefined) this.#textSignature = part.thoughtSignature;
  }

  #uniqueId(upstreamId: string | undefined): string {
    let id = upstreamId || newId('call');
    if (this.#usedIds.has(id)) id = newId('call');
    this.#usedIds.add(id);
    return id;
  }
}

/** A chunk's token log probabilities, on the text it gave (the last text delta of the chunk carries them all). */
function attachLogprobs(result: GeminiLogprobs, out: TurnEvent[], from: number): void {
  let text: Extract<TurnEvent, { type: 'text.delta' }> | null = null;
  for (let index = out.length - 1; index >= from && text === null; index--) {
    const event = out[index]!;
    if (event.type === 'text.delta') text = event;
  }
  if (!text) return;
  const bytes = (token: string) => [...Buffer.from(token, 'utf8')];
  text.logprobs = (result.chosenCandidates ?? []).map((chosen, step) => ({
    token: chosen.token ?? '',
    logprob: chosen.logProbability ?? 0,
    bytes: bytes(chosen.token ?? ''),
    top_logprobs: (result.topCandidates?.[step]?.candidates ?? []).map((top) => ({ token: top.token ?? '', logprob: top.logProbability ?? 0, bytes: bytes(top.token ?? '') })),
  }));
}

/** Thinking counts as output, as OpenResponses counts it; cached tokens are part of the prompt's. */
function toUsage(metadata: NonNullable<GeminiResponse['usageMetadata']>): TurnUsage {
  const reasoning = metadata.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0),
    outputTokens: (metadata.candidatesTokenCount ?? 0) + reasoning,
    cachedInputTokens: metadata.cachedContentTokenCount ?? 0,
    reasoningTokens: reasoning,
  };
}
