import type { ResponseResource } from '../protocol/response-resource.ts';
import type { TurnFinish, TurnRequest, TurnUsage } from '../providers/provider.ts';
import type { TraceContext } from '../util/trace-context.ts';

/**
 * Where an observer that traces writes the trace context of the call it is
 * told of (W3C header forms); the call then carries it to the upstream or
 * the tool server. Left empty, nothing is sent.
 */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

export interface ResponseStartedEvent {
  responseId: string;
  tenant: string;
  /** The model as the client named it (or the default model). */
  model: string;
  /** The configured provider serving it, and the model name it is sent under. */
  provider: string;
  upstreamModel: string;
  stream: boolean;
  background: boolean;
  conversationId: string | null;
  previousResponseId: string | null;
}

/** What the model produced in one call, as it streamed. */
export interface ModelCallOutput {
  text: string;
  refusal: string;
  toolCalls: { callId: string; name: string; arguments: string }[];
}

export interface ModelCallStartedEvent {
  /** The call's place in the response: the loop's turn (answers sent back for another try count too). */
  turn: number;
  provider: string;
  /** What the provider is asked (the model name as the upstream knows it is `request.model`). */
  request: TurnRequest;
  trace: TraceCarrier;
}

export interface ModelCallEndedEvent {
  turn: number;
  provider: string;
  model: string;
  usage: TurnUsage | null;
  finish: TurnFinish | null;
  /** Why the call failed: refused at once, an error mid-stream, or cancelled; null when it finished. */
  error: { code: string; message: string } | null;
  /** The upstream's own id for its answer and the model that produced it, when it said. */
  responseId: string | null;
  responseModel: string | null;
  durationMs: number;
  /** From the call's start to its first event (the first chunk); null when none came. */
  firstEventMs: number | null;
  output: ModelCallOutput;
}

/**
 * Watches a response and its agentic loop (seeds 000 and 002): the response
 * starting and ending, each model call, each turn, each tool call. Used for
 * structured logs and traces. Observers are bystanders: one that throws is
 * ignored, never breaks the loop. The only thing an observer may hand back
 * is a trace context, through the `trace` carrier of a call it is told of.
 */
export interface LoopObserver {
  /** The response was accepted for work (before its tools are listed and its first model call). */
  responseStarted?(event: ResponseStartedEvent): void;
  /** The response is final (terminal status, usage, error), or its stream was abandoned. */
  responseEnded?(event: { response: ResponseResource }): void;
  /** The response never ran: the request was answered with this error instead (no `responseEnded` follows). */
  responseRefused?(event: { responseId: string; error: unknown }): void;
  modelCallStarted?(event: ModelCallStartedEvent): void;
  modelCallEnded?(event: ModelCallEndedEvent): void;
  turnStarted?(event: { turn: number }): void;
  turnEnded?(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void;
  toolCallStarted?(event: { turn: number; callId: string; name: string; executor: string; arguments: string; trace: TraceCarrier }): void;
  /** `output` is what the executor returned (before error outputs are sanitised for the model); `error` repeats it for failed calls. */
  toolCallEnded?(event: { turn: number; callId: string; name: string; executor: string; durationMs: number; error: string | null; output: string }): void;
}

type Notify = Required<LoopObserver>;

/** Every hook, so that the combined observer has each one. */
const HOOKS: Record<keyof LoopObserver, true> = {
  responseStarted: true,
  responseEnded: true,
  responseRefused: true,
  modelCallStarted: true,
  modelCallEnded: true,
  turnStarted: true,
  turnEnded: true,
  toolCallStarted: true,
  toolCallEnded: true,
};
const HOOK_NAMES = Object.keys(HOOKS) as (keyof LoopObserver)[];

const silent = Object.fromEntries(HOOK_NAMES.map((hook) => [hook, () => {}])) as unknown as Notify;

/** Every hook present and safe to call. */
export function safeObserver(observers: readonly LoopObserver[]): Notify {
  if (observers.length === 0) return silent;
  const call =
    <K extends keyof LoopObserver>(hook: K) =>
    (event: Parameters<Notify[K]>[0]) => {
      for (const observer of observers) {
        try {
          (observer[hook] as ((value: typeof event) => void) | undefined)?.call(observer, event);
        } catch {
          // An observer's failure is its own business.
        }
      }
    };
  return Object.fromEntries(HOOK_NAMES.map((hook) => [hook, call(hook)])) as unknown as Notify;
}

/** Whether any observer wants model calls reported (watching a call's stream costs a little per event). */
export function observesModelCalls(observers: readonly LoopObserver[]): boolean {
  return observers.some((observer) => observer.modelCallStarted !== undefined || observer.modelCallEnded !== undefined);
}

/** The trace context an observer wrote into `carrier`, or null. */
export function carriedTrace(carrier: TraceCarrier): TraceContext | null {
  if (!carrier.traceparent) return null;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

interface Logger {
  debug(object: Record<string, unknown>, message: string): void;
}

/** One structured debug line per loop event (the logger carries the request id); the response's summary line is at info. */
export function loggingObserver(log: Logger): LoopObserver {
  return {
    turnStarted: (event) => log.debug({ loop: 'turn_start', ...event }, 'turn started'),
    turnEnded: (event) => log.debug({ loop: 'turn_end', ...event }, 'turn ended'),
    toolCallStarted: ({ trace: _trace, arguments: _arguments, ...event }) => log.debug({ loop: 'tool_start', ...event }, 'tool call started'),
    toolCallEnded: ({ output: _output, ...event }) => log.debug({ loop: 'tool_end', ...event }, 'tool call ended'),
  };
}
