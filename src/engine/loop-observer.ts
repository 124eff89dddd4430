import type { ResponseResource, Usage } from '../protocol/response-resource.ts';

/** A response's end, however it came: finished, failed, cancelled, cut short by a deadline or a shutdown, or its stream dropped. */
export interface ResponseEndedEvent {
  responseId: string;
  tenant: string;
  /** The model as the request named it (an alias, or the name sent on upstream). */
  model: string;
  provider: string;
  status: ResponseResource['status'];
  /** Summed over every model call the response made; null when none reported usage. */
  usage: Usage | null;
  /** Server-side tool calls the gateway ran. */
  toolCalls: number;
  durationMs: number;
}

/**
 * Watches the agentic loop (seeds 000 and 002): turn and tool-call start and
 * end, and the response's end. Used for structured logs, usage accounting and
 * rate limits, metrics and traces. Observers are bystanders: one that throws
 * is ignored, never breaks the loop.
 */
export interface LoopObserver {
  turnStarted?(event: { turn: number }): void;
  turnEnded?(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void;
  toolCallStarted?(event: { turn: number; callId: string; name: string; executor: string }): void;
  toolCallEnded?(event: { turn: number; callId: string; name: string; executor: string; durationMs: number; error: string | null }): void;
  /** Exactly once per response whose loop started, after its terminal event (or when its stream was abandoned). */
  responseEnded?(event: ResponseEndedEvent): void;
}

type Notify = Required<LoopObserver>;

const silent: Notify = { turnStarted: () => {}, turnEnded: () => {}, toolCallStarted: () => {}, toolCallEnded: () => {}, responseEnded: () => {} };

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
  return { turnStarted: call('turnStarted'), turnEnded: call('turnEnded'), toolCallStarted: call('toolCallStarted'), toolCallEnded: call('toolCallEnded'), responseEnded: call('responseEnded') };
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
