import { GatewayError } from '../errors/gateway-error.ts';
import type { ModelInfo, Provider, TurnEvent, TurnFinish, TurnRequest, TurnStream, TurnUsage } from '../providers/provider.ts';
import type { RefusedAttempt } from '../providers/routing/routed-provider.ts';
import type { CallTarget } from './call-target.ts';
import { carriedTrace, type LoopObserver, type ModelCallOutput, type TraceCarrier } from './loop-observer.ts';

/** A routed alias's calls: where the latest went (the deployment that took it, after a failover not the first one asked), and what was refused on the way. */
export interface RoutedCalls {
  called(): CallTarget;
  refusedAttempts(): readonly RefusedAttempt[];
}

const NO_ATTEMPTS: readonly RefusedAttempt[] = [];

/**
 * A response's provider while something observes model calls (traces,
 * metrics): each call is announced before it goes out — with a carrier a
 * tracing observer fills, which the call then carries upstream — and
 * reported once its stream is read to the end, abandoned or failed, with
 * its usage, finish, output and timings. Wraps the response's whole
 * provider stack, so one model call of the loop is one report however many
 * upstream requests it took (a truncation retry, a `pause_turn`).
 */
export class ObservedProvider implements Provider {
  readonly #inner: Provider;
  readonly #observer: Required<LoopObserver>;
  /** For a routed alias: the deployment the latest upstream call went to, which names the call once made (its provider and its model). */
  readonly #routed: RoutedCalls | null;
  #calls = 0;

  constructor(inner: Provider, observer: Required<LoopObserver>, routed: RoutedCalls | null = null) {
    this.#inner = inner;
    this.#observer = observer;
    this.#routed = routed;
  }

  /** The inner provider's: for a routed alias, the deployment of the latest call. */
  get name(): string {
    return this.#inner.name;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const turn = ++this.#calls;
    const carrier: TraceCarrier = {};
    this.#observer.modelCallStarted({ turn, provider: this.name, request, trace: carrier });
    const trace = carriedTrace(carrier);
    const tally = new ModelCallTally(turn, this.name, request.model, performance.now());
    let stream: TurnStream;
    try {
      stream = await this.#inner.startTurn(trace ? { ...request, trace } : request, signal);
    } catch (error) {
      this.#name(tally);
      this.#observer.modelCallEnded(tally.report(failureOf(error, signal)));
      throw error;
    }
    this.#name(tally);
    return this.#watch(stream, tally, signal);
  }

  /** Known only now for a routed alias: the deployment that took the call (after failing over, not the first one asked). */
  #name(tally: ModelCallTally): void {
    if (!this.#routed) {
      tally.provider = this.name;
      return;
    }
    const called = this.#routed.called();
    tally.provider = called.provider;
    tally.model = called.upstreamModel;
    tally.refusedAttempts = this.#routed.refusedAttempts();
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  async *#watch(stream: TurnStream, tally: ModelCallTally, signal: AbortSignal): AsyncGenerator<TurnEvent> {
    let failure: { code: string; message: string } | null = null;
    try {
      for await (const event of stream) {
        tally.see(event);
        yield event;
      }
    } catch (error) {
      failure = failureOf(error, signal);
      throw error;
    } finally {
      // Also when the loop stops reading early (an error event, a cancelled response).
      this.#observer.modelCallEnded(tally.report(failure ?? (signal.aborted && !tally.finished ? CANCELLED : null)));
    }
  }
}

const CANCELLED = { code: 'cancelled', message: 'The model call was cancelled.' };

/** What one call's events said so far. */
class ModelCallTally {
  readonly #turn: number;
  /** Whose call it is, and the model it was sent as; set again once the call is made (a routed alias's deployment). */
  provider: string;
  model: string;
  /** For a routed alias: the call's attempts refused before the one that took it (or failed it). */
  refusedAttempts: readonly RefusedAttempt[] = NO_ATTEMPTS;
  readonly #startedAt: number;
  #firstEventAt: number | null = null;
  #usage: TurnUsage | null = null;
  #finish: TurnFinish | null = null;
  #error: { code: string; message: string } | null = null;
  #upstream: { id: string | null; model: string | null } = { id: null, model: null };
  readonly #output: ModelCallOutput = { text: '', refusal: '', toolCalls: [] };

  constructor(turn: number, provider: string, model: string, startedAt: number) {
    this.#turn = turn;
    this.provider = provider;
    this.model = model;
    this.#startedAt = startedAt;
  }

  get finished(): boolean {
    return this.#finish !== null || this.#error !== null;
  }

  see(event: TurnEvent): void {
    this.#firstEventAt ??= performance.now();
    switch (event.type) {
      case 'text.delta':
        this.#output.text += event.delta;
        break;
      case 'refusal.delta':
        this.#output.refusal += event.delta;
        break;
      case 'tool_call.start':
        this.#output.toolCalls.push({ callId: event.callId, name: event.name, arguments: '' });
        break;
      case 'tool_call.delta': {
        const call = this.#output.toolCalls.findLast((entry) => entry.callId === event.callId);
        if (call) call.arguments += event.delta;
        break;
      }
      case 'usage':
        this.#usage = this.#usage ? addUsage(this.#usage, event.usage) : { ...event.usage };
        break;
      case 'finish':
        this.#finish = event.finish;
        break;
      case 'error':
        this.#error = { code: event.code, message: event.message };
        break;
      case 'upstream.response':
        this.#upstream = { id: event.id, model: event.model };
        break;
      case 'message.start':
      case 'reasoning.start':
      case 'reasoning.delta':
      case 'reasoning.encrypted':
      case 'text.annotation':
      case 'hosted_item.added':
      case 'hosted_item.progress':
      case 'hosted_item.done':
      case 'service_tier':
      case 'compaction':
        break;
      default:
        // A new kind of event must be considered here; at run time an unknown one is only not tallied.
        event satisfies never;
    }
  }

  report(failure: { code: string; message: string } | null) {
    const now = performance.now();
    return {
      turn: this.#turn,
      provider: this.provider,
      model: this.model,
      usage: this.#usage,
      finish: this.#finish,
      error: this.#error ?? failure,
      refusedAttempts: this.refusedAttempts,
      responseId: this.#upstream.id,
      responseModel: this.#upstream.model,
      durationMs: now - this.#startedAt,
      firstEventMs: this.#firstEventAt === null ? null : this.#firstEventAt - this.#startedAt,
      output: this.#output,
    };
  }
}

function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

function failureOf(error: unknown, signal: AbortSignal): { code: string; message: string } {
  if (signal.aborted) return CANCELLED;
  if (error instanceof GatewayError) return { code: error.code ?? 'upstream_error', message: error.message };
  return { code: 'server_error', message: error instanceof Error ? error.message : String(error) };
}
