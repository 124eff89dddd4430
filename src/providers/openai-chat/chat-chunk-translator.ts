import type { TokenLogprob, TurnEvent, TurnUsage } from '../provider.ts';
import { ToolCallTracker } from '../tool-call-tracker.ts';
import { InlineThinking, type ContentPiece } from './inline-thinking.ts';
import type { ChatAnnotation, ChatChunk, ChatDelta, ChatLogprobs, ChatUsage } from './chat-wire.ts';
import { mapChatFinishReason } from './map-chat-finish-reason.ts';
import { errorEventFrom, UNSAID } from '../upstream-errors.ts';
import { encodeSignature } from '../gemini/thought-signatures.ts';
import { ReasoningDetails, sealReasoningDetails } from './reasoning-details.ts';
import type { ReasoningHeard } from './reasoning-field.ts';

/**
 * Turns Chat Completions chunks (or one whole completion message, which is a
 * single big delta) into provider-neutral turn events. State lives here, in one
 * small object, not in the closure of a stream loop.
 */
export class ChatChunkTranslator {
  readonly #tools = new ToolCallTracker();
  readonly #thinking = new InlineThinking();
  /** OpenRouter's reasoning details of this turn; made when the first arrive (most servers send none). */
  #details: ReasoningDetails | null = null;
  /** The reasoning text given since the last details were sealed, sealed with them. */
  #detailedText = '';
  /** Told which field the server gives its reasoning in, and whether it gives reasoning details (reasoning-field.ts). */
  #heard: ((what: ReasoningHeard) => void) | null;
  #heardField = false;
  #finishReason: string | null = null;
  #sawFinish = false;
  #usage: TurnUsage | null = null;
  #identified = false;
  #tierReported = false;

  constructor(heard: ((what: ReasoningHeard) => void) | null = null) {
    this.#heard = heard;
  }

  /** Translates one chunk; returns an `error` event for in-band upstream errors. */
  accept(chunk: ChatChunk, out: TurnEvent[]): void {
    const inBandError = readInBandError(chunk);
    if (inBandError) {
      out.push(inBandError);
      return;
    }
    this.identify(chunk, out);
    this.reportTier(chunk, out);
    const choice = chunk.choices?.[0];
    if (choice) {
      if (choice.delta) this.acceptDelta(choice.delta, out, choice.logprobs);
      if (choice.finish_reason) {
        this.#finishReason = choice.finish_reason;
        this.#sawFinish = true;
      }
    }
    if (chunk.usage) this.#usage = mapUsage(chunk.usage);
  }

  acceptDelta(delta: ChatDelta, out: TurnEvent[], logprobs?: ChatLogprobs | null): void {
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) {
      if (!this.#heardField) this.#heard?.(delta.reasoning_content ? 'reasoning_content' : 'reasoning');
      this.#heardField = true;
      out.push({ type: 'reasoning.delta', delta: reasoning });
      this.#detailedText += reasoning;
    }
    if (delta.reasoning_details?.length) {
      if (!this.#details) this.#heard?.('details');
      (this.#details ??= new ReasoningDetails()).accept(delta.reasoning_details);
    }
    // The answer begins: the reasoning before it is whole, and its details close its item.
    if (delta.content || delta.tool_calls?.length) this.#sealDetails(out);
    if (delta.content) {
      const tokens = logprobs?.content;
      const pieces = this.#thinking.passesThrough ? null : this.#thinking.accept(delta.content);
      if (pieces === null || (pieces.length === 1 && pieces[0]!.kind === 'text' && pieces[0]!.text === delta.content)) {
        out.push(tokens?.length ? { type: 'text.delta', delta: delta.content, logprobs: tokens.map(mapLogprob) } : { type: 'text.delta', delta: delta.content });
      } else {
        // Log probabilities no longer line up with content split into thinking and text: left out of such a chunk.
        for (const piece of pieces) out.push(contentEvent(piece));
      }
    }
    if (delta.refusal) out.push({ type: 'refusal.delta', delta: delta.refusal });
    const calls = delta.tool_calls;
    if (calls) {
      // Blank content held while it might still open <think> came before the call: it goes first, as the model wrote it.
      if (!this.#thinking.passesThrough) for (const piece of this.#thinking.settle()) out.push(contentEvent(piece));
      for (let position = 0; position < calls.length; position++) {
        const call = calls[position]!;
        this.#tools.accept(
          {
            slot: typeof call.index === 'number' ? call.index : position,
            id: call.id ?? null,
            name: call.function?.name ?? call.custom?.name ?? null,
            ...(call.custom ? { arguments: call.custom.input ?? null, freeform: true } : { arguments: argumentsText(call.function?.arguments) }),
            signature: call.extra_content?.google?.thought_signature ?? null,
          },
          out,
        );
      }
    }
    if (delta.annotations) this.#acceptAnnotations(delta.annotations, out);
  }

  #sealDetails(out: TurnEvent[]): void {
    if (this.#details && !this.#details.isEmpty) out.push({ type: 'reasoning.encrypted', value: sealReasoningDetails(this.#details.take(), this.#detailedText) });
    this.#detailedText = '';
  }

  /** Citations (`url_citation`), in the Responses API's flat shape. */
  #acceptAnnotations(annotations: readonly ChatAnnotation[], out: TurnEvent[]): void {
    for (const annotation of annotations) {
      const citation = annotation?.type === 'url_citation' ? annotation.url_citation : null;
      if (citation && typeof citation.url === 'string') {
        out.push({ type: 'text.annotation', annotation: { type: 'url_citation', url: citation.url, title: citation.title ?? '', start_index: citation.start_index ?? 0, end_index: citation.end_index ?? 0 } });
      }
    }
  }

  /** Says once which completion and model the upstream answers with (every chunk repeats them). */
  identify(source: { id?: string | null; model?: string | null }, out: TurnEvent[]): void {
    if (this.#identified || (!source.id && !source.model)) return;
    this.#identified = true;
    out.push({ type: 'upstream.response', id: typeof source.id === 'string' ? source.id : null, model: typeof source.model === 'string' ? source.model : null });
  }

  /** Says once the tier the upstream served the call at, when it says (OpenAI repeats it on every chunk). */
  reportTier(source: { service_tier?: string | null }, out: TurnEvent[]): void {
    if (this.#tierReported || typeof source.service_tier !== 'string') return;
    this.#tierReported = true;
    out.push({ type: 'service_tier', tier: source.service_tier });
  }

  /** Marks the finish reason of a non-streamed completion. */
  setFinishReason(reason: string | null): void {
    this.#finishReason = reason;
    this.#sawFinish = true;
  }

  setUsage(usage: ChatUsage): void {
    this.#usage = mapUsage(usage);
  }

  /** Whether a finish reason arrived; a stream that closes without one was cut off. */
  get finished(): boolean {
    return this.#sawFinish;
  }

  /** The closing events: usage, then the finish. */
  finish(out: TurnEvent[]): void {
    this.#sealDetails(out);
    for (const piece of this.#thinking.end()) out.push(contentEvent(piece));
    this.#tools.closeFreeform(out);
    // Gemini's OpenAI compatibility signs calls as its own API does: the signatures travel as its own API's do, so they also survive a switch between the two.
    for (const call of this.#tools.signedCalls()) out.push({ type: 'reasoning.encrypted', value: encodeSignature({ part: 'call', ...call }) });
    if (this.#usage) out.push({ type: 'usage', usage: this.#usage });
    out.push({ type: 'finish', finish: mapChatFinishReason(this.#finishReason, this.#tools.hasCalls) });
  }
}

function contentEvent(piece: ContentPiece): TurnEvent {
  return piece.kind === 'reasoning' ? { type: 'reasoning.delta', delta: piece.text } : { type: 'text.delta', delta: piece.text };
}

/** Arguments as the text they are on the wire; some servers (llama.cpp for a while, and with a flag) send them as a JSON object. */
function argumentsText(value: unknown): string | null {
  if (value == null || typeof value === 'string') return (value as string | null | undefined) ?? null;
  return JSON.stringify(value);
}

/**
 * An error where a chunk or completion should be. Servers say it their own
 * ways: OpenAI's `{error: {code, message}}`, a status number in `code` or
 * `status_code` with the word in `type` (llama.cpp, vLLM, Groq), a bare
 * string (LM Studio, older Ollama), or `{object: "error"}` (older vLLM).
 */
export function readInBandError(chunk: ChatChunk): Extract<TurnEvent, { type: 'error' }> | null {
  const { error } = chunk;
  if (typeof error === 'string') return { type: 'error', code: 'upstream_error', message: error || UNSAID };
  if (error) return errorEventFrom(error);
  if (chunk.object === 'error') return { type: 'error', code: 'upstream_error', message: chunk.message ?? UNSAID };
  return null;
}

function mapLogprob(token: NonNullable<ChatLogprobs['content']>[number]): TokenLogprob {
  return {
    token: token.token,
    logprob: token.logprob,
    bytes: token.bytes ?? [],
    top_logprobs: (token.top_logprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? [] })),
  };
}

function mapUsage(usage: ChatUsage): TurnUsage {
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
