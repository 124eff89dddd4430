import { GatewayError } from './gateway-error.ts';

/** What an upstream said about a refused input's size; null where it did not say. */
export interface ContextSizes {
  /** The model's context window, in the upstream's tokens. */
  window: number | null;
  /** The input tokens the upstream counted for the refused call. */
  inputTokens: number | null;
  /** Output tokens the upstream counted against the window too (Anthropic's `max_tokens`, vLLM's completion). */
  outputTokens: number | null;
  /** The window bounds the input alone, the output having a limit of its own (Gemini's, OpenAI's "configured limit" of its newer models). */
  inputOnly?: boolean;
}

/**
 * The input does not fit the model's context window: a 400 with code
 * `context_length_exceeded` on every provider, as OpenAI answers it. Carries
 * what the upstream said about the sizes, so `truncation: "auto"` can learn
 * the window and how the gateway's estimate compares with the upstream's count.
 */
export class ContextLengthExceeded extends GatewayError {
  readonly sizes: ContextSizes;

  constructor(message: string, sizes: ContextSizes = { window: null, inputTokens: null, outputTokens: null }) {
    super({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'input', message });
    this.name = 'ContextLengthExceeded';
    this.sizes = sizes;
  }
}
