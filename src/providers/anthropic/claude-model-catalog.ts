import { monotonicNow } from '../../util/monotonic-clock.ts';
import { thinkingSupportByName, thinkingSupportOf, type ClaudeModelInfo, type ClaudeThinkingSupport } from './claude-thinking-support.ts';

export interface ClaudeModelCatalogOptions {
  /** Anthropic's `GET /v1/models/{id}`. */
  lookup: (model: string, signal: AbortSignal) => Promise<ClaudeModelInfo>;
  /** Longest a lookup may hold up the call waiting on it. */
  lookupTimeoutMs?: number;
  /** How long a failed lookup's guess from the name stands before the Models API is asked again. */
  retryAfterMs?: number;
  now?: () => number;
}

const MAX_MODELS = 256;

/**
 * How each Claude model takes thinking, asked of Anthropic's Models API once
 * per model and kept (a model's capabilities do not change), so the request
 * carries what that model takes — a budget, or adaptive thinking with an
 * effort it knows. Where the API cannot answer (a proxy without it, a
 * timeout), the model's name decides until it is asked again. Only calls
 * that think wait on it, and only the first for each model.
 */
export class ClaudeModelCatalog {
  readonly #options: ClaudeModelCatalogOptions;
  readonly #known = new Map<string, ClaudeThinkingSupport>();
  readonly #guessed = new Map<string, { support: ClaudeThinkingSupport; until: number }>();
  readonly #pending = new Map<string, Promise<ClaudeThinkingSupport>>();

  constructor(options: ClaudeModelCatalogOptions) {
    this.#options = options;
  }

  thinkingSupport(model: string): ClaudeThinkingSupport | Promise<ClaudeThinkingSupport> {
    const known = this.#known.get(model);
    if (known) return known;
    const now = this.#options.now?.() ?? monotonicNow();
    const guessed = this.#guessed.get(model);
    if (guessed && guessed.until > now) return guessed.support;
    let pending = this.#pending.get(model);
    if (!pending) {
      pending = this.#ask(model).finally(() => this.#pending.delete(model));
      this.#pending.set(model, pending);
    }
    return pending;
  }

  async #ask(model: string): Promise<ClaudeThinkingSupport> {
    try {
      const support = thinkingSupportOf(await this.#options.lookup(model, AbortSignal.timeout(this.#options.lookupTimeoutMs ?? 2_000)));
      if (support) {
        remember(this.#known, model, support);
        return support;
      }
    } catch {
      // Not reachable, not known to it, or no Models API at all: the name decides for now.
    }
    const support = thinkingSupportByName(model);
    remember(this.#guessed, model, { support, until: (this.#options.now?.() ?? monotonicNow()) + (this.#options.retryAfterMs ?? 300_000) });
    return support;
  }
}

/** Keeps at most MAX_MODELS entries: model names come from clients. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_MODELS && !map.has(key)) map.delete(map.keys().next().value!);
  map.set(key, value);
}
