import type { UpstreamHostedToolType } from '../../protocol/hosted-tools.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream } from '../provider.ts';
import type { DeploymentHealth } from './deployment-health.ts';
import { DeploymentAtLimit } from './deployment-limits.ts';
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

/**
 * An upstream call of one model call that a deployment refused and routing
 * moved past, to another deployment or to the larger-context alias (traces
 * show each on the call's span: a failover's time is otherwise unexplained).
 */
export interface RefusedAttempt extends ServedBy {
  code: string | null;
  message: string;
  /** When the refusal came, on `performance.now()`'s clock. */
  at: number;
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
  /** Told of every refused attempt that routing moves past, for the operator's log and metrics (the attempt that ends the call is reported as the call's failure). */
  onFailover?: (fields: { alias: string; deployment: string; provider: string; status: number | null; code: string | null }) => void;
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
 * One instance per response: `servedBy` names the deployment that served its
 * latest call, `calledBy` the one its latest upstream call went to, served or
 * refused. `name` is the first deployment's until a call was made, then
 * `calledBy`'s: whoever labels a call by its provider reads it after the call.
 */
export class RoutedProvider implements Provider {
  readonly countInputTokens?: (request: TurnRequest, signal: AbortSignal) => Promise<number>;
  servedBy: ServedBy | null = null;
  calledBy: ServedBy | null = null;
  /** The latest model call's refused attempts that routing moved past (the one that ends a failed call is its failure, not among them). */
  refusedAttempts: RefusedAttempt[] = [];
  readonly #options: RoutedProviderOptions;

  constructor(options: RoutedProviderOptions) {
    this.#options = options;
    if (options.deployments.some((deployment) => deployment.provider.countInputTokens)) this.countInputTokens = (request, signal) => this.#countInputTokens(request, signal);
  }

  get name(): string {
    return this.calledBy?.providerName ?? this.#options.deployments[0]!.providerName;
  }

  /** Every deployment, as `servedBy` would name it. */
  get deployments(): ServedBy[] {
    return this.#options.deployments.map(servedByOf);
  }

  /** Any deployment may serve any call, so a hosted tool is offered only when every deployment's upstream runs it. */
  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.#options.deployments.every((deployment) => deployment.provider.runsHostedTool?.(type) === true);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const { policy, health } = this.#options;
    let order = await this.#orderToTry();
    const retryAfter = new Map<string, number>();
    const atLimit: DeploymentAtLimit[] = [];
    let lastError: unknown = null;
    // Upstream calls left: a deployment at its own limit is skipped without using one.
    let calls = policy.retries + 1;
    /** The latest refusal, told once routing moves past it: the one that ends the call is the caller's to report. */
    let refused: { deployment: Deployment; error: unknown; at: number } | null = null;
    this.refusedAttempts = [];
    rounds: for (let round = 0; calls > 0 && order.length > 0; round++) {
      for (const deployment of [...order]) {
        if (calls === 0) break rounds;
        if (round > 0) {
          const asked = retryAfter.get(deployment.id) ?? 0;
          // Not waited for: that deployment is done for this call, the others may still be tried again.
          if (asked > policy.maxRetryAfterMs) {
            order = order.filter((candidate) => candidate !== deployment);
            continue;
          }
          await pause(Math.max(asked, policy.backoffMs * 2 ** (round - 1)), signal);
        }
        if (refused) {
          this.#reportFailover(refused.deployment, refused.error);
          this.refusedAttempts.push(refusedAttempt(refused.deployment, refused.error, refused.at));
          refused = null;
        }
        try {
          const stream = await deployment.provider.startTurn({ ...request, model: deployment.upstreamModel }, signal);
          this.servedBy = this.calledBy = servedByOf(deployment);
          return this.#judged(stream, deployment);
        } catch (error) {
          if (signal.aborted) throw error;
          if (error instanceof DeploymentAtLimit) {
            atLimit.push(error);
            order = order.filter((candidate) => candidate !== deployment);
            continue;
          }
          this.calledBy = servedByOf(deployment);
          const decision = decideFailover(error);
          if (decision.kind === 'give-up') throw error;
          if (decision.kind === 'context-length') return this.#onContextLength(request, signal, error, deployment);
          calls--;
          lastError = error;
          refused = { deployment, error, at: performance.now() };
          if (decision.retryAfterMs !== null) {
            retryAfter.set(deployment.id, decision.retryAfterMs);
            await health.coolDown(deployment.id, Math.min(decision.retryAfterMs, policy.maxRetryAfterMs));
          } else {
            await health.recordFailure(deployment.id, policy.failuresBeforeCooldown, policy.cooldownMs);
          }
        }
      }
    }
    throw lastError ?? DeploymentAtLimit.ofAll(this.#options.alias, atLimit);
  }

  /**
   * The served call's stream, its end told to the deployment's health: a
   * call that broke off inside its stream (a reset, an idle timeout, an
   * in-band error) is a failure in a row as a refused one is, so a
   * deployment whose streams always break is cooled down too; only a call
   * the model finished counts as served.
   */
  #judged(stream: TurnStream, deployment: Deployment): TurnStream {
    const { health, policy } = this.#options;
    const judge = (events: { failed: boolean; finished: boolean }) => {
      if (events.failed) void health.recordFailure(deployment.id, policy.failuresBeforeCooldown, policy.cooldownMs);
      else if (events.finished) void health.recordSuccess(deployment.id);
    };
    if (Array.isArray(stream)) {
      judge({ failed: stream.some((event) => event.type === 'error'), finished: stream.some((event) => event.type === 'finish') });
      return stream;
    }
    return judgedEvents(stream, judge);
  }

  /**
   * Counted by a deployment that can count, those not cooling down first,
   * drawn by weight (they serve the same model); one refusing as an upstream
   * in trouble hands over to the next, as `startTurn` does.
   */
  async #countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const counters = (await this.#orderToTry()).filter((deployment) => deployment.provider.countInputTokens);
    let lastError: unknown = null;
    for (const deployment of counters) {
      try {
        return await deployment.provider.countInputTokens!({ ...request, model: deployment.upstreamModel }, signal);
      } catch (error) {
        if (signal.aborted || decideFailover(error).kind !== 'retry') throw error;
        lastError = error;
        this.#reportFailover(deployment, error);
      }
    }
    throw lastError;
  }

  /**
   * The deployments not cooling down in weighted order, then those cooling
   * down: a call the healthy ones all refused is better asked of one that
   * failed a while ago than refused, or retried on the one that just failed,
   * without asking (and when every one is cooling down, they are asked all the same).
   */
  async #orderToTry(): Promise<Deployment[]> {
    const { deployments, health, random } = this.#options;
    const cooling = await health.coolingDown(deployments.map((deployment) => deployment.id));
    if (cooling.size === 0) return weightedOrder(deployments, random);
    const healthy = deployments.filter((deployment) => !cooling.has(deployment.id));
    return [...weightedOrder(healthy, random), ...weightedOrder(deployments.filter((deployment) => cooling.has(deployment.id)), random)];
  }

  async #onContextLength(request: TurnRequest, signal: AbortSignal, error: unknown, refusing: Deployment): Promise<TurnStream> {
    const fallback = this.#options.contextFallback?.();
    if (!fallback) throw error;
    this.refusedAttempts.push(refusedAttempt(refusing, error, performance.now()));
    // The larger-context alias may run fewer hosted tools: those it does not run are left out of the retry.
    const hostedTools = request.hostedTools.filter((tool) => fallback.provider.runsHostedTool?.(tool.type) === true);
    const choiceKept = request.hostedToolChoice === null || hostedTools.some((tool) => tool.type === request.hostedToolChoice!.type);
    const choice = choiceKept ? {} : { hostedToolChoice: null, toolChoice: 'auto' as const };
    const stream = await fallback.provider.startTurn({ ...request, ...choice, model: fallback.upstreamModel, hostedTools, hostedInclude: hostedTools.length > 0 ? request.hostedInclude : [] }, signal);
    this.servedBy = this.calledBy = fallback.servedBy();
    return stream;
  }

  #reportFailover(deployment: Deployment, error: unknown): void {
    const { status, code } = failureOf(error);
    this.#options.onFailover?.({ alias: this.#options.alias, deployment: deployment.id, provider: deployment.providerName, status, code });
  }

  async listModels(): Promise<ModelInfo[]> {
    return [];
  }

  /** The deployments' providers belong to the gateway, which closes them. */
  async close(): Promise<void> {}
}

function servedByOf(deployment: Deployment): ServedBy {
  return { deployment: deployment.id, providerName: deployment.providerName, upstreamModel: deployment.upstreamModel };
}

function failureOf(error: unknown): { status: number | null; code: string | null; message: string } {
  const failure = error as { status?: unknown; code?: unknown; message?: unknown };
  return {
    status: typeof failure.status === 'number' ? failure.status : null,
    code: typeof failure.code === 'string' ? failure.code : null,
    message: typeof failure.message === 'string' ? failure.message : String(error),
  };
}

function refusedAttempt(deployment: Deployment, error: unknown, at: number): RefusedAttempt {
  const { code, message } = failureOf(error);
  return { ...servedByOf(deployment), code, message, at };
}

/** The events as they come, judged once the consumer stops reading (a consumer that stops early leaves no verdict). */
async function* judgedEvents(stream: TurnStream, judge: (events: { failed: boolean; finished: boolean }) => void): AsyncGenerator<TurnEvent> {
  const seen = { failed: false, finished: false };
  try {
    for await (const event of stream) {
      if (event.type === 'error') seen.failed = true;
      else if (event.type === 'finish') seen.finished = true;
      yield event;
    }
  } finally {
    judge(seen);
  }
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
