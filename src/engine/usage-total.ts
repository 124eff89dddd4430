import type { Usage } from '../protocol/response-resource.ts';
import type { TurnUsage } from '../providers/provider.ts';

/** Token usage summed over every turn of a response (FR-028). */
export class UsageTotal {
  #total: TurnUsage | null = null;

  add(usage: TurnUsage): void {
    const total = (this.#total ??= { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 });
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.cachedInputTokens += usage.cachedInputTokens;
    total.reasoningTokens += usage.reasoningTokens;
  }

  /** The sum as a turn's usage; null when no turn reported any. */
  asTurnUsage(): TurnUsage | null {
    return this.#total && { ...this.#total };
  }

  /** Null when no turn reported usage. */
  toUsage(): Usage | null {
    return this.#total && usageOf(this.#total);
  }
}

/** A model call's usage as a response reports it. */
export function usageOf(total: TurnUsage): Usage {
  return {
    input_tokens: total.inputTokens,
    output_tokens: total.outputTokens,
    total_tokens: total.inputTokens + total.outputTokens,
    input_tokens_details: { cached_tokens: total.cachedInputTokens },
    output_tokens_details: { reasoning_tokens: total.reasoningTokens },
  };
}
