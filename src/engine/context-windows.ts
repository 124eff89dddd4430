import type { ContextSizes } from '../errors/context-length-exceeded.ts';

/** Context windows the operator configured, in tokens. */
export interface ConfiguredContextWindows {
  /** By the model name clients use (`models.<name>.contextWindow`). */
  models?: Readonly<Record<string, number>>;
  /** By provider, for the models it serves that have none of their own (`providers.<name>.contextWindow`). */
  providers?: Readonly<Record<string, number>>;
}

/** A model's context window as truncation uses it. */
export interface KnownWindow {
  /** Input and output tokens the model takes at most, in its upstream's tokens. */
  tokens: number;
  source: 'configured' | 'learned';
  /** Upstream tokens per estimated token (at least 1): how much more the upstream counts than the gateway's estimate. */
  scale: number;
  /** Output tokens the upstream counted against the window on its own (Anthropic's default `max_tokens`), kept free as well. */
  outputReserve: number;
  /** The window bounds the input alone (learned from an upstream saying so): no room is kept in it for the output. */
  inputOnly: boolean;
}

interface Learned {
  tokens: number | null;
  scale: number;
  outputReserve: number;
  inputOnly: boolean;
}

/** The least an upstream's count of an input may be of the gateway's estimate and still be taken as a count of the same input. */
const MIN_PLAUSIBLE_RATIO = 0.5;

/** Upstream models whose window was learned, at most; the oldest learned is forgotten first. */
const MAX_LEARNED = 1_000;

/**
 * What the gateway knows of each model's context window: configured by the
 * operator, or learned from upstreams refusing an input as too long (their
 * messages name the window and what they counted), remembered in memory per
 * provider and upstream model. With both, the smaller window counts.
 */
export class ContextWindows {
  readonly #configured: ConfiguredContextWindows;
  readonly #learned = new Map<string, Learned>();

  constructor(configured: ConfiguredContextWindows = {}) {
    this.#configured = configured;
  }

  /** The window of `model` (the client's name) served by `provider` as `upstreamModel`; null when none is known. */
  lookup(model: string, provider: string, upstreamModel: string): KnownWindow | null {
    const { models = {}, providers = {} } = this.#configured;
    const configured = Object.hasOwn(models, model) ? models[model]! : Object.hasOwn(providers, provider) ? providers[provider]! : null;
    const learned = this.#learned.get(key(provider, upstreamModel));
    const calibration = { scale: learned?.scale ?? 1, outputReserve: learned?.outputReserve ?? 0 };
    if (learned?.tokens != null && (configured === null || learned.tokens < configured)) return { tokens: learned.tokens, source: 'learned', ...calibration, inputOnly: learned.inputOnly };
    if (configured !== null) return { tokens: configured, source: 'configured', ...calibration, inputOnly: false };
    return null;
  }

  /** The smallest window known of `model` served at any of `targets` (a routed alias's deployments): a call fitting it fits wherever it goes. */
  lookupAny(model: string, targets: readonly { provider: string; upstreamModel: string }[]): KnownWindow | null {
    let smallest: KnownWindow | null = null;
    for (const target of targets) {
      const window = this.lookup(model, target.provider, target.upstreamModel);
      if (window && (!smallest || window.tokens / window.scale < smallest.tokens / smallest.scale)) smallest = window;
    }
    return smallest;
  }

  /**
   * Learns from an upstream's refusal of a call whose input the gateway
   * estimated at `estimatedInput` tokens: the window it named, and how its
   * count compares with the estimate (`lookup` tells what is known then).
   */
  /**
   * An upstream accepted a call whose input the gateway estimated at
   * `estimatedInput` and counted it `reportedInput`: the scale follows its
   * count, down as well as up. Learned only from refusals, one call that
   * the estimate fell far short of (images, which upstreams count much
   * higher) left every later call to the model, any tenant's, cut to half
   * what would have fitted, for good.
   */
  calibrate(provider: string, upstreamModel: string, reportedInput: number, estimatedInput: number): void {
    const learned = this.#learned.get(key(provider, upstreamModel));
    if (!learned || estimatedInput <= 0) return;
    const ratio = reportedInput / estimatedInput;
    // Tokenizers differ by tens of percent: a count under half the estimate is not of the same input (a server counting only uncached tokens).
    if (ratio < MIN_PLAUSIBLE_RATIO) return;
    learned.scale = Math.max(1, ratio);
  }

  learn(model: string, provider: string, upstreamModel: string, sizes: ContextSizes, estimatedInput: number): void {
    const id = key(provider, upstreamModel);
    const previous = this.#learned.get(id);
    const window = sizes.window ?? this.lookup(model, provider, upstreamModel)?.tokens ?? null;
    let scale = previous?.scale ?? 1;
    if (sizes.inputTokens !== null && estimatedInput > 0) scale = Math.max(1, sizes.inputTokens / estimatedInput);
    // It did not fit, and the upstream did not say by how much: what was sent counts as a tenth over the window.
    else if (window !== null && estimatedInput > 0) scale = Math.max(scale, (1.1 * window) / estimatedInput);
    this.#learned.delete(id);
    const inputOnly = sizes.window !== null ? sizes.inputOnly === true : (previous?.inputOnly ?? false);
    this.#learned.set(id, { tokens: sizes.window ?? previous?.tokens ?? null, scale, outputReserve: Math.max(previous?.outputReserve ?? 0, sizes.outputTokens ?? 0), inputOnly });
    if (this.#learned.size > MAX_LEARNED) this.#learned.delete(this.#learned.keys().next().value!);
  }
}

function key(provider: string, upstreamModel: string): string {
  return `${provider}\u0000${upstreamModel}`;
}
