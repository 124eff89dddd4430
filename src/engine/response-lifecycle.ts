import { GatewayError } from '../errors/gateway-error.ts';
import type { ResponseResource, ResponseStatus, Usage } from '../protocol/response-resource.ts';
import type { LoopObserver, ResponseStartedEvent } from './loop-observer.ts';
import { usageOf } from './usage-total.ts';

/** What a response's model calls and tools cost, counted by the loop (so a dropped stream's too). */
interface Spent {
  usage: Usage | null;
  toolCalls: number;
}

const NOTHING_SPENT: Spent = { usage: null, toolCalls: 0 };

/** Statuses a response can end with; anything else means its stream was dropped before the end. */
const ENDED = new Set<ResponseStatus>(['completed', 'failed', 'incomplete', 'cancelled', 'requires_action']);

/**
 * One response's start and end as its observers see them: started once,
 * then over exactly once whichever way it goes — ended by its terminal
 * event, a failed or abandoned stream, or the client leaving before it
 * began; or refused, when the request was answered with an HTTP error
 * instead (its first model call refused, a background start that never ran).
 */
export class ResponseLifecycle {
  readonly #observer: Required<LoopObserver>;
  readonly #started: ResponseStartedEvent;
  readonly #target: () => { provider: string; upstreamModel: string };
  readonly #redact: (text: string) => string;
  #over = false;

  /**
   * `target`: where its latest model call went, read when it ends (a routed
   * alias's deployment is known only then). `redact` blanks configured
   * credentials out of an error's message, as the client's answer has them
   * blanked: observers show it (the inspector, to the tenant).
   */
  constructor(observer: Required<LoopObserver>, started: ResponseStartedEvent, target: () => { provider: string; upstreamModel: string } = () => started, redact: (text: string) => string = (text) => text) {
    this.#observer = observer;
    this.#started = started;
    this.#target = target;
    this.#redact = redact;
    observer.responseStarted(started);
  }

  /**
   * The stream is over: `response` as its terminal event left it. `failure`
   * is what the stream threw, if it did (a JSON request then answers with an
   * HTTP error, whatever the object says).
   */
  streamEnded(response: ResponseResource, failure: { error: unknown } | null, spent: Spent): void {
    if (failure) return this.failed(failure.error, spent);
    if (!ENDED.has(response.status)) return this.#end({ status: 'cancelled', error: null, incompleteReason: 'cancelled' }, spent);
    this.#end({ status: response.status, error: response.error ? { code: response.error.code, message: response.error.message } : null, incompleteReason: response.incomplete_details?.reason ?? null }, spent);
  }

  /** Its stream threw, after spending `spent`: it ends failed. */
  failed(error: unknown, spent: Spent = NOTHING_SPENT): void {
    this.#end({ status: 'failed', error: { code: describeFailure(error).code, message: this.#redact(messageOf(error)) }, incompleteReason: null }, spent);
  }

  /** It never ran: the request is answered with `error` (an HTTP error) instead. */
  refused(error: unknown): void {
    if (this.#over) return;
    this.#over = true;
    const { code, status } = describeFailure(error);
    const { provider, upstreamModel } = this.#target();
    const billed = error instanceof GatewayError ? error.billed : null;
    this.#observer.responseRefused({ ...this.#started, provider, upstreamModel, error: { code, message: this.#redact(messageOf(error)) }, errorCode: code, httpStatus: status ?? 500, usage: billed && usageOf(billed), durationMs: performance.now() - this.#started.startedAt });
  }

  #end(outcome: { status: ResponseStatus; error: { code: string; message: string } | null; incompleteReason: string | null }, spent: Spent): void {
    if (this.#over) return;
    this.#over = true;
    const { provider, upstreamModel } = this.#target();
    const started = this.#started;
    // Written out rather than spread: once per response, and a literal of known shape is built in one step.
    this.#observer.responseEnded({
      responseId: started.responseId,
      model: started.model,
      provider,
      upstreamModel,
      tenant: started.tenant,
      stream: started.stream,
      background: started.background,
      conversationId: started.conversationId,
      previousResponseId: started.previousResponseId,
      startedAt: started.startedAt,
      status: outcome.status,
      error: outcome.error,
      incompleteReason: outcome.incompleteReason,
      errorCode: outcome.error?.code ?? null,
      usage: spent.usage,
      toolCalls: spent.toolCalls,
      durationMs: performance.now() - started.startedAt,
    });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : 'The response failed.';
}

/** A failure as observers are told of it: the error's code and the HTTP status it maps to (null for what is not a `GatewayError`). */
export function describeFailure(error: unknown): { code: string; status: number | null } {
  if (error instanceof GatewayError) return { code: error.code ?? error.type, status: error.status };
  return { code: 'server_error', status: null };
}
