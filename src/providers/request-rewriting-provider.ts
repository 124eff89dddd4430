import type { UpstreamHostedToolType } from '../protocol/hosted-tools.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from './provider.ts';

/**
 * A provider in front of another that sends it every request rewritten for
 * what its models lack (structured output, vision), and counts tokens on the
 * request as sent. The model fronts (model-router.ts) are made of it.
 */
export class RequestRewritingProvider implements Provider {
  readonly name: string;
  readonly countInputTokens?: (request: TurnRequest, signal: AbortSignal) => Promise<number>;
  readonly #inner: Provider;
  readonly #rewrite: (request: TurnRequest) => TurnRequest;

  constructor(inner: Provider, rewrite: (request: TurnRequest) => TurnRequest) {
    this.name = inner.name;
    this.#inner = inner;
    this.#rewrite = rewrite;
    const count = inner.countInputTokens?.bind(inner);
    if (count) this.countInputTokens = (request, signal) => count(rewrite(request), signal);
  }

  startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    return this.#inner.startTurn(this.#rewrite(request), signal);
  }

  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.#inner.runsHostedTool?.(type) === true;
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
