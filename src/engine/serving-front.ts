import type { UpstreamHostedToolType } from '../protocol/hosted-tools.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../providers/provider.ts';

/**
 * A provider the engine puts in front of the serving one for one response
 * (`generate: false`, a compaction): it answers turns its own way, and
 * otherwise stands for the serving provider, whose lifetime is not its to end.
 */
export abstract class ServingFront implements Provider {
  readonly name: string;
  protected readonly serving: Provider;

  constructor(serving: Provider) {
    this.name = serving.name;
    this.serving = serving;
  }

  abstract startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream>;

  runsHostedTool(type: UpstreamHostedToolType): boolean {
    return this.serving.runsHostedTool?.(type) === true;
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.serving.listModels(signal);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
