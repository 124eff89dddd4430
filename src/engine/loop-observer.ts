import type { ResponseStatus, Usage } from '../protocol/response-resource.ts';

/**
 * Watches the agentic loop (seeds 000 and 002): turn and tool-call start and
 * end. Used for structured logs now, metrics and traces later. Observers are
 * bystanders: one that throws is ignored, never breaks the loop.
 */
export interface LoopObserver {
  turnStarted?(event: { turn: number }): void;
  turnEnded?(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void;
  toolCallStarted?(event: { turn: number; callId: string; name: string; executor: string }): void;
  toolCallEnded?(event: { turn: number; callId: string; name: string; executor: string; durationMs: number; error: string | null }): void;
  /** The loop starts running the response (a background one: when its runner takes it up). */
  responseStarted?(event: ResponseStartedEvent): void;
  /** The response is final, just before its terminal event goes out; once per started response. */
  responseEnded?(event: ResponseEndedEvent): void;
  /** A call waits for the client's approval: the response pauses with it (`mcp_approval_request`). */
  approvalRequested?(event: { turn: number; callId: string; name: string }): void;
}

export interface ResponseStartedEvent {
  responseId: string;
  tenant: string;
  /** The model as the client named it (or the default model). */
  model: string;
  /** The provider serving it. */
  provider: string;
  background: boolean;
}

export interface ResponseEndedEvent {
  responseId: string;
  status: ResponseStatus;
  usage: Usage | null;
  error: { code: string; message: string } | null;
  /** `incomplete_details.reason` of an incomplete (or cancelled) response. */
  incompleteReason: string | null;
  /** From `responseStarted` to the final state. */
  durationMs: number;
}

/** What an observer of every response learns of one as the engine starts it. */
export interface ObservedResponse {
  id: string;
  tenant: string;
  background: boolean;
  /**
   * Cleans a tool error the way the client's output item is cleaned (no stack
   * traces, internal addresses or secrets, bounded): `toolCallEnded` carries
   * it raw, for the operator's log; whoever shows it to others cleans it.
   */
  cleanToolError(error: string): string;
}

/**
 * Makes the observer of one response, for observers of every response the
 * engine runs, whatever the transport (the inspector; metrics and traces
 * alike): the per-response instance is what ties its turn and tool events
 * together. Null: not interested in this one.
 */
export type ResponseObserverFactory = (response: ObservedResponse) => LoopObserver | null;

type Notify = Required<LoopObserver>;

const silent: Notify = { turnStarted: () => {}, turnEnded: () => {}, toolCallStarted: () => {}, toolCallEnded: () => {}, responseStarted: () => {}, responseEnded: () => {}, approvalRequested: () => {} };

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
    responseEnded: call('responseEnded'),
    approvalRequested: call('approvalRequested'),
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
