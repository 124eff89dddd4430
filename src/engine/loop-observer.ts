import type { ResponseStatus, Usage } from '../protocol/response-resource.ts';

/** Who a response is for and where it runs, as the engine settled it before the first model call. */
export interface ResponseStartedEvent {
  responseId: string;
  /** The model as the client named it (or the configured default): unbounded, so observers bound it before using it as a label. */
  model: string;
  /** The provider serving it (a configured provider's name). */
  provider: string;
  upstreamModel: string;
  tenant: string;
  background: boolean;
  /** `performance.now()` when the engine took the request: durations count from here. */
  startedAt: number;
}

/** How a response ended; every started response ends exactly once, also when it failed before its stream began. */
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
 * Watches the agentic loop (seeds 000 and 002): the response's start and
 * end, turn and tool-call start and end, each model call's first output and
 * failures. Used for structured logs, metrics, traces, the inspector, usage accounting and rate limits. Observers are
 * bystanders: one that throws is ignored, never breaks the loop.
 */
export interface LoopObserver {
  turnStarted?(event: { turn: number }): void;
  turnEnded?(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void;
  toolCallStarted?(event: { turn: number; callId: string; name: string; executor: string }): void;
  toolCallEnded?(event: { turn: number; callId: string; name: string; executor: string; durationMs: number; error: string | null }): void;
  /** Before the first model call (a background response: when it is queued). */
  responseStarted?(event: ResponseStartedEvent): void;
  /** A model call's first output arrived: text, reasoning, a refusal or a tool call. */
  modelCallFirstOutput?(event: { turn: number }): void;
  /** A model call failed: the upstream refused it at once (`status` is the HTTP status it became), or its stream reported an error (`status` null). */
  modelCallFailed?(event: { turn: number; code: string; status: number | null }): void;
  /** A call waits for the client's approval: the response pauses with it (`mcp_approval_request`). */
  approvalRequested?(event: { turn: number; callId: string; name: string }): void;
  /** Once per started response, also when it failed before its stream began. */
  responseEnded?(event: ResponseEndedEvent): void;
}

/** What an observer of every response learns of one as the engine starts it. */
export interface ObservedResponse {
  id: string;
  tenant: string;
  background: boolean;
  /** The response's `created_at` (Unix seconds). */
  createdAt: number;
  /**
   * Cleans a tool error the way the client's output item is cleaned (no stack
   * traces, internal addresses or secrets, bounded): `toolCallEnded` carries
   * it raw, for the operator's log; whoever shows it to others cleans it.
   */
  cleanToolError(error: string): string;
}

/**
 * Makes the observer of one response (metrics, traces, the inspector),
 * whatever the transport: the per-response instance is what ties its turn and
 * tool events together. Null: not interested in this one.
 */
export type ResponseObserverFactory = (response: ObservedResponse) => LoopObserver | null;

type Notify = Required<LoopObserver>;

const silent: Notify = {
  turnStarted: () => {},
  turnEnded: () => {},
  toolCallStarted: () => {},
  toolCallEnded: () => {},
  responseStarted: () => {},
  modelCallFirstOutput: () => {},
  modelCallFailed: () => {},
  approvalRequested: () => {},
  responseEnded: () => {},
};

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
  return {
    turnStarted: call('turnStarted'),
    turnEnded: call('turnEnded'),
    toolCallStarted: call('toolCallStarted'),
    toolCallEnded: call('toolCallEnded'),
    responseStarted: call('responseStarted'),
    modelCallFirstOutput: call('modelCallFirstOutput'),
    modelCallFailed: call('modelCallFailed'),
    approvalRequested: call('approvalRequested'),
    responseEnded: call('responseEnded'),
  };
}

interface Logger {
  debug(object: Record<string, unknown>, message: string): void;
}

/** One structured debug line per loop event (the logger carries the request id); the response's summary line is at info. */
export function loggingObserver(log: Logger): LoopObserver {
  return {
    turnStarted: (event) => log.debug({ loop: 'turn_start', ...event }, 'turn started'),
    turnEnded: (event) => log.debug({ loop: 'turn_end', ...event }, 'turn ended'),
    toolCallStarted: (event) => log.debug({ loop: 'tool_start', ...event }, 'tool call started'),
    toolCallEnded: (event) => log.debug({ loop: 'tool_end', ...event }, 'tool call ended'),
  };
}
