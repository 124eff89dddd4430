import { ContextLengthExceeded } from '../errors/context-length-exceeded.ts';
import type { TruncationReport } from '../protocol/response-resource.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../providers/provider.ts';
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
  readonly name: string;
  readonly #inner: Provider;
  readonly #windows: ContextWindows;
  /** The model name the client asked for (configured windows are by that name). */
  readonly #model: string;
  #report: TruncationReport | null = null;

  constructor(inner: Provider, windows: ContextWindows, model: string) {
    this.name = inner.name;
    this.#inner = inner;
    this.#windows = windows;
    this.#model = model;
  }

  /** What the last call that left anything out left out; null while nothing was. */
  get report(): TruncationReport | null {
    return this.#report;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const sent = await this.#fit(request, this.#window(request));
    try {
      return await this.#inner.startTurn(sent.request, signal);
    } catch (error) {
      if (!(error instanceof ContextLengthExceeded) || signal.aborted) throw error;
      this.#windows.learn(this.#model, this.name, request.model, error.sizes, (await estimateTurnTokens(sent.request)).total);
      const learned = this.#window(request);
      if (!learned) throw error;
      const retry = await this.#fit(request, learned);
      // Nothing more to leave out: the refusal stands.
      if (retry.request.items.length >= sent.request.items.length) throw error;
      return await this.#inner.startTurn(retry.request, signal);
    }
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #window(request: TurnRequest): KnownWindow | null {
    return this.#windows.lookup(this.#model, this.name, request.model);
  }

  async #fit(request: TurnRequest, window: KnownWindow | null): Promise<FittedTurn> {
    if (!window) return { request, dropped: 0, estimatedTokens: null };
    const fitted = await fitContextWindow(request, window);
    if (fitted.dropped > 0) {
      this.#report = { dropped_items: fitted.dropped, context_window: window.tokens, window_source: window.source, estimated_input_tokens: fitted.estimatedTokens ?? 0 };
    }
    return fitted;
  }
}
