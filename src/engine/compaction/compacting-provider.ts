import type { Provider, TurnEvent, TurnRequest, TurnStream } from '../../providers/provider.ts';
import { newId } from '../../util/ids.ts';
import { userMessage } from '../model-transcript.ts';
import { ServingFront } from '../serving-front.ts';
import type { CompactionCodec } from './compaction-codec.ts';
import { COMPACTION_REQUEST } from './compaction-prompt.ts';
import { answersToOpenCalls, readSummary } from './compactor.ts';

/**
 * The model of a response whose input ends with `compaction_trigger`
 * (OpenAI's; Codex compacts this way against OpenAI): the one model call
 * summarises the window, as `POST /v1/responses/compact` does, with no tools
 * offered, and the turn's answer is a single compaction item sealing the
 * summary — the response's only output item, as Codex requires. Everything
 * else (storage, events, usage, metrics, traces, WebSocket) is an ordinary
 * response's.
 */
export class CompactingProvider extends ServingFront {
  readonly #codec: CompactionCodec;
  readonly #seal: { tenant: string; model: string };

  constructor(serving: Provider, codec: CompactionCodec, seal: { tenant: string; model: string }) {
    super(serving);
    this.#codec = codec;
    this.#seal = seal;
  }

  /** Read whole before answering: a summary that fails is the request's error (a 502, as on the compact endpoint), not a failed response. */
  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const items = [...request.items, ...answersToOpenCalls(request.items), userMessage(COMPACTION_REQUEST)];
    const summarising: TurnRequest = { ...request, items, tools: [], hostedTools: [], hostedInclude: [], toolChoice: null, hostedToolChoice: null, parallelToolCalls: null, textFormat: null };
    const summary = await readSummary(await this.serving.startTurn(summarising, signal));
    const encrypted = this.#codec.seal(this.#seal.tenant, { summary: summary.text, createdAt: Math.floor(Date.now() / 1000), model: this.#seal.model });
    const usage = summary.usage.asTurnUsage();
    const events: TurnEvent[] = summary.upstream ? [summary.upstream] : [];
    events.push({ type: 'compaction', item: { id: newId('cmp'), type: 'compaction', encrypted_content: encrypted } });
    if (usage) events.push({ type: 'usage', usage });
    events.push({ type: 'finish', finish: { reason: 'stop', raw: null } });
    return events;
  }
}
