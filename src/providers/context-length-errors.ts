import { ContextLengthExceeded } from '../errors/context-length-exceeded.ts';

/**
 * Recognizes an upstream refusing an input too long for its model, in the
 * wordings upstreams use, and reads the sizes it names:
 *
 * - OpenAI and vLLM: code `context_length_exceeded`, or "This model's maximum
 *   context length is 128000 tokens. However, your messages resulted in
 *   130000 tokens" (vLLM: "you requested 5000 tokens (4000 in the messages,
 *   1000 in the completion)", "your request has 5000 input tokens"); OpenAI's
 *   newer models, whose input has a limit of its own: "Input tokens exceed
 *   the configured limit of 272000 tokens. Your messages resulted in 289650
 *   tokens.";
 * - Anthropic: "prompt is too long: 210000 tokens > 200000 maximum", and
 *   "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000";
 * - llama.cpp: type `exceed_context_size_error`, "the request (5000 tokens)
 *   exceeds the available context size (4096 tokens)".
 *
 * `codes` are the upstream's error code and type. Null when the refusal is
 * about something else.
 */
export function contextLengthError(message: string, codes: readonly (string | null)[] = []): ContextLengthExceeded | null {
  const anthropic = /prompt is too long:\s*(\d+) tokens\s*>\s*(\d+) maximum/i.exec(message);
  if (anthropic) return new ContextLengthExceeded(message, { window: number(anthropic[2]), inputTokens: number(anthropic[1]), outputTokens: null });
  const withOutput = /exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)/i.exec(message);
  if (withOutput) return new ContextLengthExceeded(message, { window: number(withOutput[3]), inputTokens: number(withOutput[1]), outputTokens: number(withOutput[2]) });
  const llamaCpp = /\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i.exec(message);
  if (llamaCpp) return new ContextLengthExceeded(message, { window: number(llamaCpp[2]), inputTokens: number(llamaCpp[1]), outputTokens: null });
  const inputLimit = /input tokens exceed the configured limit of (\d+) tokens/i.exec(message);
  if (inputLimit) {
    const counted = /resulted in (\d+) tokens/i.exec(message);
    return new ContextLengthExceeded(message, { window: number(inputLimit[1]), inputTokens: number(counted?.[1]), outputTokens: null, inputOnly: true });
  }

  const window = /maximum context length is (\d+) tokens/i.exec(message);
  const recognized = codes.some((code) => code === 'context_length_exceeded' || code === 'exceed_context_size_error') || window !== null || /exceeds? (?:the )?(?:available )?context (?:window|size)/i.test(message);
  if (!recognized) return null;
  // vLLM's "requested" counts the completion too, and says so.
  const split = /(\d+) in the messages,\s*(\d+) in the completion/i.exec(message);
  const input = split?.[1] ?? /(?:resulted in|requested|request has) (\d+) (?:input )?tokens/i.exec(message)?.[1];
  return new ContextLengthExceeded(message, { window: number(window?.[1]), inputTokens: number(input), outputTokens: number(split?.[2]) });
}

function number(text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = Number.parseInt(text, 10);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}
