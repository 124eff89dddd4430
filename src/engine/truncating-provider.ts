import { ContextLengthExceeded } from '../errors/context-length-exceeded.ts';
import type { TruncationReport } from '../protocol/response-resource.ts';
import type { ModelRoute } from '../providers/model-router.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../providers/provider.ts';
import { calledTarget, routeTargets } from './call-target.ts';
import type { ContextWindows, KnownWindow } from './context-windows.ts';
import { estimateTurnTokens } from './token-estimate.ts';
import { fitContextWindow, type FittedTurn } from './truncate-turn.ts';

/**
 * A response's provider under `truncation: "auto"`: every model call of the
 * agentic loop, the first included, is made to fit the model's context window
 * before it goes out (truncate-turn.ts). When the upstream still refuses the
 * input as too long, what its refusal says — the window, its own count — is
 * remembered for the model (context-windows.ts) and the call is truncated
 * again and retried, once. One per response: it keeps what the response's
 * last truncated call left out, for `loopgate:truncation`.
 */
export class TruncatingProvider implements Provider {
  readonly #route: ModelRoute;
  readonly #inner: Provider;
  readonly #windows: ContextWindows;
  /** The model name the client asked for (configured windows are by that name). */
  readonly #model: string;
  #report: TruncationReport | null = null;

  /** Truncates for the route's provider; a routed alias's calls fit the smallest window of its deployments, and a refusal teaches the deployment that refused. */
  constructor(route: ModelRoute, windows: ContextWindows, model: string) {
    this.#route = route;
    this.#inner = route.provider;
    this.#windows = windows;
    this.#model = model;
  }

  /** The inner provider's: for a routed alias, the deployment of the latest call. */
  get name(): string {
    return this.#inner.name;
  }

  /** What the last call that left anything out left out; null while nothing was. */
  get report(): TruncationReport | null {
    return this.#report;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const sent = await this.#fit(request, this.#window(request));
    try {
      return this.#calibrating(await this.#inner.startTurn(sent.request, signal), sent, request);
    } catch (error) {
      if (!(error instanceof ContextLengthExceeded) || signal.aborted) throw error;
      const refusedBy = calledTarget(this.#route, request.model);
      this.#windows.learn(this.#model, refusedBy.provider, refusedBy.upstreamModel, error.sizes, (await estimateTurnTokens(sent.request)).total);
      const learned = this.#window(request);
      if (!learned) throw error;
      const retry = await this.#fit(request, learned);
      // Nothing more to leave out: the refusal stands.
      if (retry.request.items.length >= sent.request.items.length) throw error;
      return this.#calibrating(await this.#inner.startTurn(retry.request, signal), retry, request);
    }
  }

  /** A call whose input was counted near the window: the upstream's own count of it, when it reports one, calibrates the estimate. */
  #calibrating(stream: TurnStream, sent: FittedTurn, request: TurnRequest): TurnStream {
    if (sent.estimate === null) return stream;
    const target = calledTarget(this.#route, request.model);
    const windows = this.#windows;
    const estimate = sent.estimate;
    return (async function* () {
      for await (const event of stream) {
        if (event.type === 'usage' && event.usage.inputTokens > 0) windows.calibrate(target.provider, target.upstreamModel, event.usage.inputTokens, estimate);
        yield event;
      }
    })();
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #window(request: TurnRequest): KnownWindow | null {
    return this.#windows.lookupAny(this.#model, routeTargets(this.#route, request.model));
  }

  async #fit(request: TurnRequest, window: KnownWindow | null): Promise<FittedTurn> {
    if (!window) return { request, dropped: 0, estimatedTokens: null, estimate: null };
    const fitted = await fitContextWindow(request, window);
    if (fitted.dropped > 0) {
      this.#report = { dropped_items: fitted.dropped, context_window: window.tokens, window_source: window.source, estimated_input_tokens: fitted.estimatedTokens ?? 0 };
    }
    return fitted;
  }
}
