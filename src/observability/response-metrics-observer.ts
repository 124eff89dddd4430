import type { LoopObserver, ResponseEndedEvent, ResponseRefusedEvent } from '../engine/loop-observer.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/**
 * One response's loop events, turned into metrics: its tool calls and failed
 * model calls as they happen, its duration, time to first token, turns and
 * tokens when it ends. A response refused at once (its first model call)
 * counts as a failed one; `modelCallFailed` has counted the upstream's error.
 */
export class ResponseMetricsObserver implements LoopObserver {
  readonly #metrics: GatewayMetrics;
  #turns = 0;
  #firstOutputAt: number | null = null;

  constructor(metrics: GatewayMetrics) {
    this.#metrics = metrics;
  }

  /** Counted as it starts: a model call cut off (a client gone, a cancel) was a turn all the same. */
  turnStarted(): void {
    this.#turns++;
  }

  modelCallFirstOutput(): void {
    this.#firstOutputAt ??= performance.now();
  }

  modelCallFailed(event: { turn: number; provider: string; code: string }): void {
    this.#metrics.upstreamError(event.provider, event.code);
    // A first call refused at once is started outside the loop, with no turnStarted: it was a model call all the same, as a background response's is.
    if (event.turn > this.#turns) this.#turns = event.turn;
  }

  toolCallEnded(event: { executor: string; server: string | null; durationMs: number; error: string | null }): void {
    this.#metrics.toolCall(event.executor, event.server, event.error !== null, event.durationMs);
  }

  responseEnded(event: ResponseEndedEvent): void {
    this.#metrics.responseEnded(event, this.#turns, this.#firstOutputAt === null ? null : this.#firstOutputAt - event.startedAt);
  }

  responseRefused(event: ResponseRefusedEvent): void {
    this.#metrics.responseEnded({ ...event, status: 'failed', incompleteReason: null, usage: null, toolCalls: 0 }, this.#turns, null);
  }
}
