import type { UpstreamHostedToolType } from '../../protocol/hosted-tools.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import { DeploymentAtLimit, type DeploymentLimiter, type DeploymentLimits, type LimitPermit } from './deployment-limits.ts';

export interface LimitedProviderOptions {
  limits: DeploymentLimits;
  limiter: DeploymentLimiter;
  /** The input tokens a call is estimated to cost, reserved before it goes out (asked only under a token limit). */
  estimateInputTokens: (request: TurnRequest) => Promise<number>;
}

/**
 * A provider entry under its own outbound limits: each model call takes a
 * request, its estimated input tokens and a concurrency slot before anything
 * is sent, and refuses with `DeploymentAtLimit` when a limit is reached (a
 * routed alias then moves on to another deployment). Once the call ends, the
 * tokens the upstream reported replace the estimate and the slot is freed.
 */
export class LimitedProvider implements Provider {
  readonly name: string;
  readonly countInputTokens?: (request: TurnRequest, signal: AbortSignal) => Promise<number>;
  readonly #inner: Provider;
  readonly #options: LimitedProviderOptions;

  constructor(inner: Provider, options: LimitedProviderOptions) {
    this.name = inner.name;
    this.#inner = inner;
    this.#options = options;
    // Counting is not a model call: it passes unmetered.
    if (inner.countInputTokens) this.countInputTokens = (request, signal) => inner.countInputTokens!(request, signal);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const { limits, limiter, estimateInputTokens } = this.#options;
    const estimate = limits.tokensPerMinute === null ? 0 : await estimateInputTokens(request);
    const admission = await limiter.admit(this.name, limits, estimate);
    if (!admission.allowed) throw DeploymentAtLimit.of(this.name, admission);
    const permit = once(admission.permit);
    // A response abandoned before its stream is read still frees the slot.
    const onAbort = () => permit.settle(null);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return settleWhenDone(await this.#inner.startTurn(request, signal), permit, () => signal.removeEventListener('abort', onAbort));
    } catch (error) {
      signal.removeEventListener('abort', onAbort);
      // Refused upstream: it counted as a request, but it used no tokens.
      permit.settle(0);
      throw error;
    }
  }

  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.#inner.runsHostedTool?.(type) === true;
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  /** The inner provider belongs to the gateway, which closes it. */
  async close(): Promise<void> {}
}

async function* settleWhenDone(stream: TurnStream, permit: LimitPermit, cleanup: () => void): AsyncGenerator<TurnEvent> {
  let used: number | null = null;
  try {
    for await (const event of stream) {
      if (event.type === 'usage') used = event.usage.inputTokens + event.usage.outputTokens;
      yield event;
    }
  } finally {
    cleanup();
    permit.settle(used);
  }
}

function once(permit: LimitPermit): LimitPermit {
  let settled = false;
  return {
    settle(used) {
      if (settled) return;
      settled = true;
      permit.settle(used);
    },
  };
}
