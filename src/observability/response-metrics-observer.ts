import type { LoopObserver, ModelCallEndedEvent, ResponseEndedEvent, ResponseRefusedEvent, ResponseStartedEvent } from '../engine/loop-observer.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/**
 * One response's loop events, turned into metrics: its tool calls and failed
 * model calls as they happen, its duration, time to first token, turns and
 * tokens when it ends. A response refused at once (its first model call)
 * counts as a failed one; `modelCallFailed` has counted the upstream's error.
 */
export class ResponseMetricsObserver implements LoopObserver {
  protected readonly metrics: GatewayMetrics;
  /** Whether the response's tokens are counted when it ends, under its provider (else as each model call ends). */
  protected readonly tokensAtEnd: boolean = true;
  #turns = 0;
  #firstOutputAt: number | null = null;

  /** False when the response calls no model (`generate: false`): its turn is no model call. */
  readonly #callsModel: boolean;

  constructor(metrics: GatewayMetrics, callsModel = true) {
    this.metrics = metrics;
    this.#callsModel = callsModel;
  }

  /** Counted as it starts: a model call cut off (a client gone, a cancel) was a turn all the same. */
  turnStarted(): void {
    if (this.#callsModel) this.#turns++;
  }

  modelCallFirstOutput(): void {
    this.#firstOutputAt ??= performance.now();
  }

  modelCallFailed(event: { turn: number; provider: string; code: string }): void {
    this.metrics.upstreamError(event.provider, event.code);
    // A first call refused at once is started outside the loop, with no turnStarted: it was a model call all the same, as a background response's is.
    if (event.turn > this.#turns) this.#turns = event.turn;
  }

  toolCallEnded(event: { executor: string; server: string | null; durationMs: number; error: string | null }): void {
    this.metrics.toolCall(event.executor, event.server, event.error !== null, event.durationMs);
  }

  responseEnded(event: ResponseEndedEvent): void {
    this.metrics.responseEnded(event, this.#turns, this.#firstOutputAt === null ? null : this.#firstOutputAt - event.startedAt, this.tokensAtEnd);
  }

  responseRefused(event: ResponseRefusedEvent): void {
    this.metrics.responseEnded({ ...event, status: 'failed', incompleteReason: null, toolCalls: 0 }, this.#turns, null);
  }
}

/**
 * A routed alias's response: its model calls may be served by different
 * providers (a deployment failing over to another mid-response), so each
 * call's tokens are counted as it ends, under the provider that served it,
 * not all under the last one. (Watching model calls costs a little per
 * event: only routed responses pay for it.)
 */
export class RoutedResponseMetricsObserver extends ResponseMetricsObserver {
  protected override readonly tokensAtEnd = false;
  #started: ResponseStartedEvent | null = null;

  responseStarted(event: ResponseStartedEvent): void {
    this.#started = event;
  }

  modelCallEnded(event: ModelCallEndedEvent): void {
    if (event.usage && this.#started) this.metrics.tokensUsed(this.#started.model, event.provider, this.#started.tenant, event.usage);
  }
}
