import { GatewayError, invalidRequest } from '../../errors/gateway-error.ts';
import type { CompactRequest } from '../../protocol/compact-request.ts';
import type { CompactResource, KeptUserMessage } from '../../protocol/compact-resource.ts';
import type { InputItem, UserContentPart } from '../../protocol/input-items.ts';
import { refuseUnsupportedParameters } from '../../protocol/unsupported-parameters.ts';
import type { ModelRouter } from '../../providers/model-router.ts';
import type { TurnEvent, TurnRequest, TurnStream, TurnUsage } from '../../providers/provider.ts';
import type { ResponseStore } from '../../store/response-store.ts';
import { assertNever } from '../../util/assert-never.ts';
import { newId } from '../../util/ids.ts';
import { calledTarget, routedCalls } from '../call-target.ts';
import type { LoopObserver } from '../loop-observer.ts';
import { ObservedProvider } from '../observed-provider.ts';
import { buildConversation } from '../conversation.ts';
import { ResponseDeadline } from '../response-deadline.ts';
import { toTurnRequest } from '../turn-request.ts';
import { UsageTotal } from '../usage-total.ts';
import type { CompactionCodec } from './compaction-codec.ts';
import { COMPACTION_REQUEST, UNANSWERED_CALL_OUTPUT } from './compaction-prompt.ts';
import { modelInputOf } from './expand-compactions.ts';

export interface CompactorOptions {
  router: ModelRouter;
  store: ResponseStore;
  codec: CompactionCodec;
  /** Longest the summarising call may take (the response deadline, `loop.deadlineMs`). */
  deadlineMs: number;
  /** Told of each summarising call, as a response's model calls are told to the metrics. */
  calls?: CompactionCallWatcher;
}

/** What a compaction's model call comes to, for the metrics: a compaction is a model call, though no response. */
export interface CompactionCallWatcher {
  /** The tokens the upstream billed (the summary may still have failed: cut short, refused, empty). */
  billed(model: string, provider: string, tenant: string, usage: TurnUsage): void;
  /** The call failed: the upstream refused it at once, or its stream ended in an error. */
  failed(provider: string, code: string): void;
}

export interface CompactOptions {
  tenant: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Runs once the summarising call is assembled, before it is sent; throwing refuses the compaction (as `CreateResponseOptions.admit`). */
  admit?(call: TurnRequest): Promise<void>;
  /** Told of the summarising call as of a response's model calls (a trace: its span, whose context the call carries upstream). */
  observer?: Required<LoopObserver>;
}

/**
 * `POST /v1/responses/compact`: the window — the `previous_response_id`
 * chain, then `input` — is summarised by the model in one call without tools,
 * and handed back as the window's user messages followed by one compaction
 * item sealing the summary. Nothing is stored: the client sends the output
 * back as the input of its next response, where the engine expands the item
 * (expand-compactions.ts). Earlier compaction items in the window are
 * expanded for the model too, and folded into the new summary.
 */
export class Compactor {
  readonly #options: CompactorOptions;

  constructor(options: CompactorOptions) {
    this.#options = options;
  }

  async compact(request: CompactRequest, options: CompactOptions): Promise<CompactResource> {
    const { router, store, codec, deadlineMs } = this.#options;
    refuseUnsupportedParameters(request);
    const route = router.resolve(request.model);
    const { history, input } = await buildConversation(store, options.tenant, request);
    if (history.length === 0 && input.length === 0) throw invalidRequest("Missing required parameter: 'input' (there is nothing to compact).", 'input', 'missing_required_parameter');
    const window = modelInputOf(history, input, { codec, tenant: options.tenant, inherited: 'previous_response_id' });
    const items: InputItem[] = [...window, ...answersToOpenCalls(window), { type: 'message', role: 'user', content: COMPACTION_REQUEST }];
    const turn = toTurnRequest(request, route.upstreamModel, items, history.length, []);
    await options.admit?.(turn);

    const deadline = new ResponseDeadline(options.signal, deadlineMs);
    let summary: { text: string; usage: UsageTotal };
    try {
      const provider = options.observer ? new ObservedProvider(route.provider, options.observer, routedCalls(route)) : route.provider;
      summary = await readSummary(await provider.startTurn(turn, deadline.signal));
    } catch (error) {
      const failure = deadline.cause === 'deadline_exceeded' ? new GatewayError({ status: 504, type: 'upstream_error', code: 'upstream_timeout', message: `The model did not finish the summary within the response deadline (${deadlineMs} ms).`, cause: error }) : error;
      if (!options.signal.aborted) this.#watch(request.model, route, options.tenant, failure);
      throw failure;
    } finally {
      deadline.dispose();
    }
    const billed = summary.usage.asTurnUsage();
    if (billed) this.#options.calls?.billed(request.model, calledTarget(route).provider, options.tenant, billed);

    const createdAt = Math.floor(Date.now() / 1000);
    return {
      id: newId('resp'),
      object: 'response.compaction',
      created_at: createdAt,
      output: [
        ...[...history, ...input].flatMap(keptUserMessage),
        { id: newId('cmp'), type: 'compaction', encrypted_content: codec.seal(options.tenant, { summary: summary.text, createdAt, model: request.model }) },
      ],
      usage: summary.usage.toUsage() ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    };
  }
  /** A failed summarising call, told as a response's would be: billed tokens if the upstream answered, and a failure unless the summary itself was what failed. */
  #watch(model: string, route: ReturnType<ModelRouter['resolve']>, tenant: string, error: unknown): void {
    const watcher = this.#options.calls;
    if (!watcher || !(error instanceof GatewayError)) return;
    const provider = calledTarget(route).provider;
    if (error.billed) watcher.billed(model, provider, tenant, error.billed);
    if (!SUMMARY_FAILURES.has(error.code ?? '')) watcher.failed(provider, error.code ?? 'upstream_error');
  }
}

/** The model's text, whole, or a 502 when the call failed or stopped before the summary was complete. */
export async function readSummary(stream: TurnStream): Promise<{ text: string; usage: UsageTotal; upstream: Extract<TurnEvent, { type: 'upstream.response' }> | null }> {
  let upstream: Extract<TurnEvent, { type: 'upstream.response' }> | null = null;
  let text = '';
  let refusal = '';
  let finish: string | null = null;
  const usage = new UsageTotal();
  for await (const event of stream) {
    switch (event.type) {
      case 'text.delta':
        text += event.delta;
        break;
      case 'message.start':
        // A summary in several messages is one text, its messages as paragraphs.
        if (text) text += '\n\n';
        break;
      case 'refusal.delta':
        refusal += event.delta;
        break;
      case 'usage':
        usage.add(event.usage);
        break;
      // Which answer and model the upstream gave: the compaction's model call is traced with it, as any other.
      case 'upstream.response':
        upstream = event;
        break;
      case 'finish':
        finish = event.finish.reason;
        break;
      case 'error':
        throw summaryFailed(event.code, `The model call failed while summarising: ${event.message}`, usage);
      // Reasoning and tool calls (none were offered) are not part of the summary.
      case 'reasoning.start':
      case 'reasoning.delta':
      case 'reasoning.encrypted':
      case 'tool_call.start':
      case 'tool_call.delta':
      case 'service_tier':
      // Nor are annotations or hosted calls (no hosted tools were offered either).
      case 'text.annotation':
      case 'hosted_item.added':
      case 'hosted_item.progress':
      case 'hosted_item.done':
      case 'compaction':
        break;
      default:
        assertNever(event);
    }
  }
  if (finish === null) throw summaryFailed('upstream_stream_truncated', 'The model call ended without a finish reason; the summary may be incomplete.', usage);
  if (finish === 'length') throw summaryFailed('summary_truncated', 'The summary reached the model\'s output token limit before it was complete.', usage);
  if (refusal || finish === 'content_filter') throw summaryFailed('summary_refused', `The model refused to summarise the conversation${refusal ? `: ${refusal}` : '.'}`, usage);
  if (text.trim() === '') throw summaryFailed('summary_empty', 'The model wrote no summary.', usage);
  return { text: text.trim(), usage, upstream };
}

/** Codes of a summary the model did write, that cannot stand: the call itself did not fail. */
const SUMMARY_FAILURES = new Set(['summary_truncated', 'summary_refused', 'summary_empty']);

/** The upstream answered, and billed what it read and wrote: the failure carries that, to be charged. */
function summaryFailed(code: string, message: string, usage: UsageTotal): GatewayError {
  return new GatewayError({ status: 502, type: 'upstream_error', code, message, billed: usage.asTurnUsage() });
}

/**
 * An output for every call of the window left unanswered (a paused turn):
 * upstreams refuse a conversation that goes on past an open call. Providers
 * move each output next to its call (order-tool-outputs.ts).
 */
export function answersToOpenCalls(window: readonly InputItem[]): InputItem[] {
  const answered = new Set(window.flatMap((item) => (item.type === 'function_call_output' ? [item.call_id] : [])));
  return window.flatMap((item) => (item.type === 'function_call' && !answered.has(item.call_id) ? [{ type: 'function_call_output' as const, call_id: item.call_id, output: UNANSWERED_CALL_OUTPUT }] : []));
}

/** A user message of the window, as the compacted output keeps it; every other item is left to the summary. */
function keptUserMessage(item: InputItem): KeptUserMessage[] {
  if (item.type !== 'message' || item.role !== 'user') return [];
  const content = typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content.map(contentPartView);
  return [{ id: item.id ?? newId('msg'), type: 'message', role: 'user', status: 'completed', content }];
}

/** A content part in `ItemField`'s shape: images always say their URL and detail. */
function contentPartView(part: UserContentPart): Record<string, unknown> {
  return part.type === 'input_image' ? { type: 'input_image', image_url: part.image_url ?? null, detail: part.detail ?? 'auto' } : { ...part };
}
