import type { TurnEvent, TurnFinish, TurnUsage } from '../provider.ts';
import { encodeRedactedThinking, encodeThinking } from './reasoning-blocks.ts';

/** The Messages stream events the translator reads (the SDK's raw events, loosely typed). */
export interface AnthropicStreamEvent {
  type: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage; content?: unknown[] };
  content_block?: { type: string; id?: string; name?: string; text?: string; thinking?: string; signature?: string; data?: string; input?: unknown };
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; signature?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** The tier Anthropic served the message at: `standard`, `priority` (or `batch`). */
  service_tier?: string | null;
  /** Of `output_tokens`, those the model thought in. */
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

type Block =
  | { kind: 'text' }
  | { kind: 'tool'; callId: string; sawInput: boolean; /** The input as the block's start gave it, for a call whose input never streams. */ startInput: string }
  | { kind: 'thinking'; text: string; signature: string }
  | { kind: 'other' };

/**
 * Turns Messages stream events into provider-neutral turn events: text,
 * tool calls (input JSON streamed as argument deltas), thinking with its
 * signature, redacted thinking, usage (cache reads and writes counted as
 * input) and the stop reason. One translator reads one upstream message;
 * block state lives in this object.
 */
export class AnthropicStreamTranslator {
  readonly #blocks = new Map<number, Block>();
  #usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, thinking_tokens: 0 };
  #tierReported = false;
  #stopReason: string | null = null;
  #stopped = false;

  get stopReason(): string | null {
    return this.#stopReason;
  }

  /** Whether `message_stop` arrived; a stream that ends without it was cut off. */
  get stopped(): boolean {
    return this.#stopped;
  }

  accept(event: AnthropicStreamEvent, out: TurnEvent[]): void {
    switch (event.type) {
      case 'message_start':
        this.#takeUsage(event.message?.usage, out);
        if (event.message?.id || event.message?.model) out.push({ type: 'upstream.response', id: event.message.id ?? null, model: event.message.model ?? null });
        return;
      case 'content_block_start':
        this.#start(event.index ?? 0, event.content_block ?? { type: 'other' }, out);
        return;
      case 'content_block_delta':
        this.#delta(event.index ?? 0, event.delta ?? {}, out);
        return;
      case 'content_block_stop':
        this.#stop(event.index ?? 0, out);
        return;
      case 'message_delta':
        if (event.delta?.stop_reason) this.#stopReason = event.delta.stop_reason;
        // Usage in message_delta is cumulative for the message: it replaces what message_start said.
        this.#takeUsage(event.usage, out);
        return;
      case 'message_stop':
        this.#stopped = true;
        return;
      case 'error':
        out.push({ type: 'error', code: event.error?.type ?? 'upstream_error', message: event.error?.message ?? 'The upstream reported an error.' });
        return;
      default:
        // ping, and event types added later: nothing to do.
        return;
    }
  }

  usage(): TurnUsage {
    const usage = this.#usage;
    return {
      inputTokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      outputTokens: usage.output_tokens,
      cachedInputTokens: usage.cache_read_input_tokens,
      reasoningTokens: usage.thinking_tokens,
    };
  }

  finish(hasToolCalls: boolean): TurnFinish {
    const raw = this.#stopReason;
    switch (raw) {
      case 'max_tokens':
      case 'model_context_window_exceeded':
        return { reason: 'length', raw };
      case 'refusal':
        return { reason: 'content_filter', raw };
      case 'tool_use':
        return { reason: 'tool_calls', raw };
      default:
        return { reason: hasToolCalls ? 'tool_calls' : 'stop', raw };
    }
  }

  #start(index: number, block: NonNullable<AnthropicStreamEvent['content_block']>, out: TurnEvent[]): void {
    switch (block.type) {
      case 'text':
        this.#blocks.set(index, { kind: 'text' });
        if (block.text) out.push({ type: 'text.delta', delta: block.text });
        return;
      case 'tool_use':
      case 'server_tool_use': {
        const callId = block.id ?? `toolu_${index}`;
        // Anthropic starts a call with empty input and streams it; a compatible server may send it whole here instead.
        const startInput = block.input !== null && typeof block.input === 'object' && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '{}';
        this.#blocks.set(index, { kind: 'tool', callId, sawInput: false, startInput });
        out.push({ type: 'tool_call.start', callId, name: block.name ?? 'unknown' });
        return;
      }
      case 'thinking':
        this.#blocks.set(index, { kind: 'thinking', text: block.thinking ?? '', signature: block.signature ?? '' });
        if (block.thinking) out.push({ type: 'reasoning.delta', delta: block.thinking });
        return;
      case 'redacted_thinking':
        this.#blocks.set(index, { kind: 'other' });
        out.push({ type: 'reasoning.encrypted', value: encodeRedactedThinking(block.data ?? '') });
        return;
      default:
        this.#blocks.set(index, { kind: 'other' });
    }
  }

  #delta(index: number, delta: NonNullable<AnthropicStreamEvent['delta']>, out: TurnEvent[]): void {
    const block = this.#blocks.get(index);
    if (!block) return;
    if (delta.type === 'text_delta' && delta.text) out.push({ type: 'text.delta', delta: delta.text });
    else if (delta.type === 'input_json_delta' && block.kind === 'tool' && delta.partial_json) {
      block.sawInput = true;
      out.push({ type: 'tool_call.delta', callId: block.callId, delta: delta.partial_json });
    } else if (delta.type === 'thinking_delta' && block.kind === 'thinking' && delta.thinking) {
      block.text += delta.thinking;
      out.push({ type: 'reasoning.delta', delta: delta.thinking });
    } else if (delta.type === 'signature_delta' && block.kind === 'thinking') {
      // A signature delta replaces; it does not append.
      block.signature = delta.signature ?? '';
    }
  }

  #stop(index: number, out: TurnEvent[]): void {
    const block = this.#blocks.get(index);
    if (block?.kind === 'tool' && !block.sawInput) out.push({ type: 'tool_call.delta', callId: block.callId, delta: block.startInput });
    if (block?.kind === 'thinking') out.push({ type: 'reasoning.encrypted', value: encodeThinking(block.text, block.signature) });
  }

  #takeUsage(usage: AnthropicUsage | undefined, out: TurnEvent[]): void {
    if (!usage) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.#usage[key] = value;
    }
    const thinking = usage.output_tokens_details?.thinking_tokens;
    if (typeof thinking === 'number') this.#usage.thinking_tokens = thinking;
    // The tier it served at is what the response reports, in OpenAI's words (`standard` is OpenAI's `default`).
    if (!this.#tierReported && typeof usage.service_tier === 'string') {
      this.#tierReported = true;
      out.push({ type: 'service_tier', tier: usage.service_tier === 'standard' ? 'default' : usage.service_tier });
    }
  }
}
