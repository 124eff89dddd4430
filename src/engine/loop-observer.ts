import type { ResponseStatus, Usage } from '../protocol/response-resource.ts';
import type { TurnFinish, TurnRequest, TurnUsage } from '../providers/provider.ts';
import type { RefusedAttempt } from '../providers/routing/routed-provider.ts';
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

/**
 * Who a response is for and where it runs, as the engine settled it before
 * the first model call: conversation read, tools listed, the request
 * admitted by its rate limits.
 */
export interface ResponseStartedEvent {
  responseId: string;
  /** The model as the client named it (or the configured default): unbounded, so observers bound it before using it as a label. */
  model: string;
  /** The provider serving it (a configured provider's name). */
  provider: string;
  /** The model name it is sent upstream under. */
  upstreamModel: string;
  tenant: string;
  /** Whether the client streams its events. */
  stream: boolean;
  background: boolean;
  /** The conversation it continues and appends to (`conversation`), if any. */
  conversationId: string | null;
  previousResponseId: string | null;
  /** `performance.now()` when the engine took the request: durations count from here (a trace's response span starts here too). */
  startedAt: number;
}

/** How a response that ran ended; every started response ends exactly once, with this or with `responseRefused`. */
export interface ResponseEndedEvent extends ResponseStartedEvent {
  status: ResponseStatus;
  /** `error.code` of a failed response. */
  errorCode: string | null;
  /** The error of a failed response (its message as the client sees it). */
  error: { code: string; message: string } | null;
  /** `incomplete_details.reason` of an incomplete or cancelled one. */
  incompleteReason: string | null;
  /** Summed over its model calls (a dropped stream's too); null when no call reported any. */
  usage: Usage | null;
  /** Server-side tool calls the gateway ran. */
  toolCalls: number;
  durationMs: number;
}

/**
 * A started response that never ran: the request was answered with an HTTP
 * error instead of a response — its first model call was refused (the
 * upstream failed at once, or turned the request down), or a background
 * response could not be queued. Nothing of it was ever sent as a response.
 */
export interface ResponseRefusedEvent extends ResponseStartedEvent {
  /** The error envelope's code and message, as the client got them. */
  error: { code: string; message: string };
  errorCode: string;
  /** The HTTP status the request was answered with (4xx: the request as the upstream judged it; 5xx: a failure). */
  httpStatus: number;
  /** What the upstream charged for the refused call all the same (a summary it cut short); null when nothing. */
  usage: Usage | null;
  durationMs: number;
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
  /** The model name the call went upstream under: for a routed alias, the deployment's that took it (after a failover, not the first one asked). */
  model: string;
  usage: TurnUsage | null;
  finish: TurnFinish | null;
  /** Why the call failed: refused at once, an error mid-stream, or cancelled; null when it finished. */
  error: { code: string; message: string } | null;
  /** For a routed alias: upstream calls that deployments refused before the one that took the call (or failed it), each moved past to the next. */
  refusedAttempts: readonly RefusedAttempt[];
  /** The upstream's own id for its answer and the model that produced it, when it said. */
  responseId: string | null;
  responseModel: string | null;
  durationMs: number;
  /** From the call's start to its first event (the first chunk, whatever it held); null when none came. */
  firstEventMs: number | null;
  output: ModelCallOutput;
}

export interface ToolCallStartedEvent {
  turn: number;
  callId: string;
  /** The id the client finds the call under: an `mcp_call` item's own id, or the call id of a call shown as a `function_call`. */
  itemId: string;
  name: string;
  executor: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
  /** Filled by a tracing observer: the call carries it to the tool server (MCP: `params._meta`). */
  trace: TraceCarrier;
}

export interface ToolCallEndedEvent {
  turn: number;
  callId: string;
  name: string;
  executor: string;
  /** The operator's MCP server the call ran on (`OfferedTool.operatorServer`); null for any other (a request's server, another executor). */
  server: string | null;
  durationMs: number;
  /** A failed call's error output, raw (for the operator's log; whoever shows it to others cleans it: `ObservedResponse.cleanToolError`). */
  error: string | null;
  /** The error is the gateway's own (the call timed out, or was cancelled), not what the tool answered. */
  unfinished?: boolean;
  /** What the executor returned, before error outputs are cleaned for the model; `error` repeats it for failed calls. */
  output: string;
}

export interface ToolCallRefusedEvent {
  turn: number;
  callId: string;
  name: string;
  /** Why, as the call's output tells the model and the client. */
  error: string;
}

/**
 * Watches a response and its agentic loop (seeds 000 and 002), whatever its
 * transport: the response's start and its end (or refusal), turn and
 * tool-call start and end, each model call. Used for structured logs,
 * metrics, traces, the inspector, usage accounting and rate limits.
 * Observers are bystanders: one that throws is ignored, never breaks the
 * loop. The only thing an observer may hand back is a trace context,
 * through the `trace` carrier of a call it is told of.
 *
 * A response is started once (`responseStarted`), then ends exactly once:
 * `responseEnded` when it ran, `responseRefused` when the request was
 * answered with an HTTP error instead. A request refused before it starts
 * (validation, a missing conversation, a refused MCP server, its rate
 * limits) is no response: no hook hears of it.
 *
 * Model calls have two families of hooks, for two kinds of observers:
 * `modelCallFirstOutput` / `modelCallFailed` come from the loop, cost
 * nothing, and say when the model's first output came and that a call
 * failed (the loop's turns; metrics, logs). `modelCallStarted` /
 * `modelCallEnded` come from a wrapper of the provider (observed-provider.ts)
 * that runs only while some observer has one of them: each call with its
 * request, a trace carrier, and at its end usage, finish, output and timings
 * (traces).
 */
export interface LoopObserver {
  /** Before the first model call (a background response: when it is queued); see `ResponseStartedEvent`. */
  responseStarted?(event: ResponseStartedEvent): void;
  /** The response ran and is over: its terminal event, its stream failed or was dropped by its reader (`cancelled`), or the client left before it began. */
  responseEnded?(event: ResponseEndedEvent): void;
  /** The response never ran: the request was answered with this error instead (no `responseEnded` follows). */
  responseRefused?(event: ResponseRefusedEvent): void;
  turnStarted?(event: { turn: number }): void;
  turnEnded?(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void;
  toolCallStarted?(event: ToolCallStartedEvent): void;
  toolCallEnded?(event: ToolCallEndedEvent): void;
  /**
   * A call the gateway answered with an error output without running it: a
   * tool nobody offered, one a policy or `allowed_tools` refuses, arguments
   * that are not JSON, or a call left unrun at a limit. No executor ran it, so
   * it is no `toolCallStarted`/`toolCallEnded` (nor a tool call in metrics).
   */
  toolCallRefused?(event: ToolCallRefusedEvent): void;
  /** A model call's first output arrived (text, reasoning, a refusal or a tool call), in the loop's turn `turn`. */
  modelCallFirstOutput?(event: { turn: number }): void;
  /** A model call failed: the upstream refused it at once (`status` is the HTTP status it became), or its stream reported an error (`status` null); not said of a call the response's own cancellation stopped. */
  /** `provider`: whose call failed (for a routed alias, the deployment that refused it). */
  modelCallFailed?(event: { turn: number; provider: string; code: string; status: number | null }): void;
  /** A model call is about to go out (only while an observer has `modelCallStarted` or `modelCallEnded`). */
  modelCallStarted?(event: ModelCallStartedEvent): void;
  /** That call's stream was read to its end, abandoned or failed (cancelled ones included, with code `cancelled`). */
  modelCallEnded?(event: ModelCallEndedEvent): void;
  /** A call waits for the client's approval: the response pauses with it (`mcp_approval_request`). */
  approvalRequested?(event: { turn: number; callId: string; name: string }): void;
}

/** What an observer of every response learns of one as the engine starts it. */
export interface ObservedResponse {
  id: string;
  tenant: string;
  background: boolean;
  /** The response's `created_at` (Unix seconds). */
  createdAt: number;
  /** Served by a routed alias: its model calls may go to different providers (a failover), each call's provider in its `modelCallEnded`. */
  routed: boolean;
  /** False for `generate: false`: its one turn prepares the state and calls no model. */
  callsModel: boolean;
  /**
   * Cleans a tool error the way the client's output item is cleaned (no stack
   * traces, internal addresses or secrets, bounded): `toolCallEnded` carries
   * it raw, for the operator's log; whoever shows it to others cleans it.
   */
  cleanToolError(error: string): string;
}

/**
 * Makes the observer of one response (metrics, the inspector, usage),
 * whatever the transport: the per-response instance is what ties its turn and
 * tool events together. Null: not interested in this one.
 */
export type ResponseObserverFactory = (response: ObservedResponse) => LoopObserver | null;

type Notify = Required<LoopObserver>;

/** Every hook, once (a hook added to `LoopObserver` must be added here, and to `CombinedObserver`, which the compiler checks). */
const HOOKS: Record<keyof LoopObserver, true> = {
  responseStarted: true,
  responseEnded: true,
  responseRefused: true,
  turnStarted: true,
  turnEnded: true,
  toolCallStarted: true,
  toolCallEnded: true,
  toolCallRefused: true,
  modelCallFirstOutput: true,
  modelCallFailed: true,
  modelCallStarted: true,
  modelCallEnded: true,
  approvalRequested: true,
};
const HOOK_NAMES = Object.keys(HOOKS) as (keyof LoopObserver)[];

const silent = Object.fromEntries(HOOK_NAMES.map((hook) => [hook, () => {}])) as unknown as Notify;

/** Every hook present and safe to call. */
export function safeObserver(observers: readonly LoopObserver[]): Notify {
  return observers.length === 0 ? silent : new CombinedObserver(observers);
}

/**
 * Tells every observer, each failure swallowed. A class rather than a dozen
 * closures made per response: its methods are shared, the response only
 * allocates the instance.
 */
class CombinedObserver implements Notify {
  readonly #observers: readonly LoopObserver[];

  constructor(observers: readonly LoopObserver[]) {
    this.#observers = observers;
  }

  responseStarted(event: Parameters<Notify['responseStarted']>[0]): void {
    this.#tell('responseStarted', event);
  }
  responseEnded(event: Parameters<Notify['responseEnded']>[0]): void {
    this.#tell('responseEnded', event);
  }
  responseRefused(event: Parameters<Notify['responseRefused']>[0]): void {
    this.#tell('responseRefused', event);
  }
  turnStarted(event: Parameters<Notify['turnStarted']>[0]): void {
    this.#tell('turnStarted', event);
  }
  turnEnded(event: Parameters<Notify['turnEnded']>[0]): void {
    this.#tell('turnEnded', event);
  }
  toolCallStarted(event: Parameters<Notify['toolCallStarted']>[0]): void {
    this.#tell('toolCallStarted', event);
  }
  toolCallEnded(event: Parameters<Notify['toolCallEnded']>[0]): void {
    this.#tell('toolCallEnded', event);
  }
  toolCallRefused(event: Parameters<Notify['toolCallRefused']>[0]): void {
    this.#tell('toolCallRefused', event);
  }
  modelCallFirstOutput(event: Parameters<Notify['modelCallFirstOutput']>[0]): void {
    this.#tell('modelCallFirstOutput', event);
  }
  modelCallFailed(event: Parameters<Notify['modelCallFailed']>[0]): void {
    this.#tell('modelCallFailed', event);
  }
  modelCallStarted(event: Parameters<Notify['modelCallStarted']>[0]): void {
    this.#tell('modelCallStarted', event);
  }
  modelCallEnded(event: Parameters<Notify['modelCallEnded']>[0]): void {
    this.#tell('modelCallEnded', event);
  }
  approvalRequested(event: Parameters<Notify['approvalRequested']>[0]): void {
    this.#tell('approvalRequested', event);
  }

  #tell<K extends keyof LoopObserver>(hook: K, event: Parameters<Notify[K]>[0]): void {
    for (const observer of this.#observers) {
      try {
        (observer[hook] as ((value: typeof event) => void) | undefined)?.call(observer, event);
      } catch {
        // An observer's failure is its own business.
      }
    }
  }
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
