import type { UpstreamHostedToolType } from '../../protocol/hosted-tools.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../provider.ts';
import type { DeploymentHealth } from './deployment-health.ts';
import { decideFailover } from './failover-decision.ts';
import { weightedOrder } from './weighted-order.ts';

/** One place a model alias can be served: a provider (with its own credentials) and the model name it knows. */
export interface Deployment {
  /** Stable name, `<provider>/<upstream model>`: the cool-down key, and what clients and logs are told. */
  id: string;
  provider: Provider;
  providerName: string;
  upstreamModel: string;
  weight: number;
}

/** How hard a routed alias tries before giving up (config `routing`). */
export interface RoutingPolicy {
  /** Attempts after the first, over the deployments in weighted order (revisiting them after a back-off). */
  retries: number;
  /** The pause before revisiting a deployment, doubled each further round. */
  backoffMs: number;
  /** A `retry-after` longer than this is not waited for; the deployment cools down this long at most. */
  maxRetryAfterMs: number;
  cooldownMs: number;
  failuresBeforeCooldown: number;
}

/** Which deployment served a model call. */
export interface ServedBy {
  deployment: string;
  providerName: string;
  upstreamModel: string;
}

/** The larger-context alias to retry on when the input is too long, resolved when first needed. */
export interface ContextFallback {
  provider: Provider;
  upstreamModel: string;
  servedBy(): ServedBy;
}

export interface RoutedProviderOptions {
  alias: string;
  deployments: readonly Deployment[];
  policy: RoutingPolicy;
  health: DeploymentHealth;
  contextFallback?: () => ContextFallback;
  /** Told of every refused attempt that routing moves past, for the operator's log. */
  onFailover?: (fields: { alias: string; deployment: string; status: number | null; code: string | null }) => void;
  random?: () => number;
}

/**
 * Serves one model alias from several deployments. Each model call (each
 * turn of the agentic loop, independently) goes to a deployment drawn by
 * weight among those not cooling down; a call refused before any output —
 * unreachable, 429, 5xx, overloaded — moves on to the next deployment, and
 * round again after a back-off, within `retries`. Since a provider's
 * `startTurn` resolves only once the upstream's first frame is known not to be
 * an error, nothing has reached the client when it rejects; a failure after
 * that arrives as an `error` event in the stream and is never retried.
 *
 * One instance per response: `servedBy` names the deployment of its latest call.
 */
export class RoutedProvider implements Provider {
  readonly name: string;
  readonly countInputTokens?: (request: TurnRequest, signal: AbortSignal) => Promise<number>;
  servedBy: ServedBy | null = null;
  readonly #options: RoutedProviderOptions;

  constructor(options: RoutedProviderOptions) {
    this.#options = options;
    const first = options.deployments[0]!;
    this.name = first.providerName;
    // Counting needs no routing: the first deployment's upstream counts for all (they serve the same model).
    if (first.provider.countInputTokens) this.countInputTokens = (request, signal) => first.provider.countInputTokens!({ ...request, model: first.upstreamModel }, signal);
  }

  /** Any deployment may serve any call, so a hosted tool is offered only when every deployment's upstream runs it. */
  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.#options.deployments.every((deployment) => deployment.provider.runsHostedTool?.(type) === true);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const { deployments, policy, health } = this.#options;
    const cooling = await health.coolingDown(deployments.map((deployment) => deployment.id));
    const healthy = deployments.filter((deployment) => !cooling.has(deployment.id));
    // All cooling down: trying one is better than refusing without asking.
    const order = weightedOrder(healthy.length > 0 ? healthy : deployments, this.#options.random);
    const retryAfter = new Map<string, number>();
    let lastError: unknown = null;
    for (let attempt = 0; attempt <= policy.retries; attempt++) {
      const deployment = order[attempt % order.length]!;
      const round = Math.floor(attempt / order.length);
      if (round > 0) {
        const asked = retryAfter.get(deployment.id) ?? 0;
        if (asked > policy.maxRetryAfterMs) break;
        await pause(Math.max(asked, policy.backoffMs * 2 ** (round - 1)), signal);
      }
      try {
        const stream = await deployment.provider.startTurn({ ...request, model: deployment.upstreamModel }, signal);
        this.servedBy = { deployment: deployment.id, providerName: deployment.providerName, upstreamModel: deployment.upstreamModel };
        void health.recordSuccess(deployment.id);
        return stream;
      } catch (error) {
        if (signal.aborted) throw error;
        const decision = decideFailover(error);
        if (decision.kind === 'give-up') throw error;
        if (decision.kind === 'context-length') return this.#onContextLength(request, signal, error);
        lastError = error;
        this.#reportFailover(deployment, error);
        if (decision.retryAfterMs !== null) {
          retryAfter.set(deployment.id, decision.retryAfterMs);
          await health.coolDown(deployment.id, Math.min(decision.retryAfterMs, policy.maxRetryAfterMs));
        } else {
          await health.recordFailure(deployment.id, policy.failuresBeforeCooldown, policy.cooldownMs);
        }
      }
    }
    throw lastError;
  }

  async #onContextLength(request: TurnRequest, signal: AbortSignal, error: unknown): Promise<TurnStream> {
    const fallback = this.#options.contextFallback?.();
    if (!fallback) throw error;
    // The larger-context alias may run fewer hosted tools: those it does not run are left out of the retry.
    const hostedTools = request.hostedTools.filter((tool) => fallback.provider.runsHostedTool?.(tool.type) === true);
    const stream = await fallback.provider.startTurn({ ...request, model: fallback.upstreamModel, hostedTools, hostedInclude: hostedTools.length > 0 ? request.hostedInclude : [] }, signal);
    this.servedBy = fallback.servedBy();
    return stream;
  }

  #reportFailover(deployment: Deployment, error: unknown): void {
    const failure = error as { status?: unknown; code?: unknown };
    this.#options.onFailover?.({
      alias: this.#options.alias,
      deployment: deployment.id,
      status: typeof failure.status === 'number' ? failure.status : null,
      code: typeof failure.code === 'string' ? failure.code : null,
    });
  }

  async listModels(): Promise<ModelInfo[]> {
    return [];
  }

  /** The deployments' providers belong to the gateway, which closes them. */
  async close(): Promise<void> {}
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
