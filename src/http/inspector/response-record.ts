import type { LoopObserver, ObservedResponse, ResponseEndedEvent, ResponseRefusedEvent, ResponseStartedEvent, ToolCallRefusedEvent } from '../../engine/loop-observer.ts';
import { jsonStringField } from '../../util/json-string-field.ts';
import type { ResponseStatus } from '../../protocol/response-resource.ts';
import { boundError, type InspectorApproval, type InspectorResponse, type InspectorTimeline, type InspectorToolCall, type InspectorTurn } from './inspector-views.ts';

/** Turns, tool calls and approvals kept per response: with errors bounded too, a runaway loop costs at most ~150 kB here. */
export const MAX_TIMELINE_ENTRIES = 256;

/**
 * One response as the inspector saw it run: fed by its loop observer, read
 * as views. Times are `performance.now()` offsets from the start, so they
 * never jump with the wall clock.
 */
export class ResponseRecord implements LoopObserver {
  readonly id: string;
  readonly tenant: string;
  readonly #background: boolean;
  /** Held only while the response runs: it keeps the response's tool context alive. */
  #cleanToolError: ObservedResponse['cleanToolError'] | null;
  readonly #onStart: (record: ResponseRecord) => void;
  readonly #createdAt: number;
  readonly #startedAt = performance.now();
  #model = '';
  #provider: string | null = null;
  #status: ResponseStatus;
  #ended: ResponseEndedEvent | null = null;
  #endedMs: number | null = null;
  readonly #turns: InspectorTurn[] = [];
  /** By call id; tool calls of a turn keep their start order. */
  readonly #toolCalls = new Map<string, InspectorToolCall>();
  readonly #approvals: InspectorApproval[] = [];
  #leftOut = 0;
  /** Counted whether or not the timeline kept them (it keeps MAX_TIMELINE_ENTRIES): the summary's figures are the response's own. */
  readonly #counts = { turns: 0, toolCalls: 0, failedToolCalls: 0 };

  /** `onStart`: the response started running (a record whose loop never starts is never listed). */
  constructor(observed: ObservedResponse, onStart: (record: ResponseRecord) => void) {
    this.#background = observed.background;
    this.#cleanToolError = observed.cleanToolError;
    this.#onStart = onStart;
    this.#createdAt = observed.createdAt;
    this.id = observed.id;
    this.tenant = observed.tenant;
    this.#status = observed.background ? 'queued' : 'in_progress';
  }

  responseStarted(event: ResponseStartedEvent): void {
    this.#model = event.model;
    this.#provider = event.provider;
    this.#status = 'in_progress';
    this.#onStart(this);
  }

  responseEnded(event: ResponseEndedEvent): void {
    this.#ended = event;
    this.#endedMs = this.#now();
    this.#status = event.status;
    this.#cleanToolError = null;
  }

  /** Refused at once (the client got an HTTP error): shown as failed, with that error. */
  responseRefused(event: ResponseRefusedEvent): void {
    this.responseEnded({ ...event, status: 'failed', incompleteReason: null, usage: null, toolCalls: 0 });
  }

  turnStarted(event: { turn: number }): void {
    this.#counts.turns++;
    if (this.#full()) return;
    this.#turns.push({ turn: event.turn, started_ms: this.#now(), duration_ms: null, finish: null, tool_calls: null });
  }

  turnEnded(event: { turn: number; toolCalls: number; finish: string | null; durationMs: number }): void {
    const turn = this.#turns.findLast((entry) => entry.turn === event.turn);
    if (!turn) return;
    turn.duration_ms = round(event.durationMs);
    turn.finish = event.finish;
    turn.tool_calls = event.toolCalls;
  }

  toolCallStarted(event: { turn: number; callId: string; name: string; executor: string }): void {
    this.#counts.toolCalls++;
    if (this.#full()) return;
    this.#toolCalls.set(event.callId, { turn: event.turn, call_id: event.callId, name: event.name, executor: event.executor, started_ms: this.#now(), duration_ms: null, status: 'running', error: null });
  }

  toolCallEnded(event: { callId: string; durationMs: number; error: string | null }): void {
    if (event.error !== null) this.#counts.failedToolCalls++;
    const call = this.#toolCalls.get(event.callId);
    if (!call) return;
    call.duration_ms = round(event.durationMs);
    call.status = event.error === null ? 'completed' : 'failed';
    call.error = event.error === null ? null : this.#shownError(event.error);
  }

  /** Answered with an error without running (no executor, no duration): failed, as the client saw it. */
  toolCallRefused(event: ToolCallRefusedEvent): void {
    this.#counts.toolCalls++;
    this.#counts.failedToolCalls++;
    if (this.#full()) return;
    this.#toolCalls.set(event.callId, { turn: event.turn, call_id: event.callId, name: event.name, executor: null, started_ms: this.#now(), duration_ms: null, status: 'failed', error: this.#shownError(event.error) });
  }

  /** The error as the client's output reads it (its `error`, not the JSON around it), cleaned: the raw one is the operator log's, this may reach a tenant's eyes. */
  #shownError(error: string): string {
    const text = jsonStringField(error, 'error') ?? error;
    return boundError(this.#cleanToolError?.(text) ?? 'The tool call failed.');
  }

  approvalRequested(event: { turn: number; callId: string; name: string }): void {
    if (this.#full()) return;
    this.#approvals.push({ turn: event.turn, call_id: event.callId, name: event.name, at_ms: this.#now() });
  }

  summary(): InspectorResponse {
    const usage = this.#ended?.usage ?? null;
    return {
      object: 'loopgate:inspector.response',
      id: this.id,
      tenant: this.tenant,
      model: this.#model,
      provider: this.#provider,
      background: this.#background,
      status: this.#status,
      created_at: this.#createdAt,
      duration_ms: this.#endedMs ?? this.#now(),
      turns: this.#counts.turns,
      tool_calls: this.#counts.toolCalls,
      failed_tool_calls: this.#counts.failedToolCalls,
      tokens: usage && { input: usage.input_tokens, output: usage.output_tokens, total: usage.total_tokens },
      error: this.#ended?.error ?? null,
      incomplete_reason: this.#ended?.incompleteReason ?? null,
    };
  }

  timeline(): InspectorTimeline {
    return {
      object: 'loopgate:inspector.timeline',
      source: 'live',
      response: this.summary(),
      turns: this.#turns.map((turn) => ({ ...turn })),
      tool_calls: [...this.#toolCalls.values()].map((call) => ({ ...call })),
      approvals: this.#approvals.map((approval) => ({ ...approval })),
      left_out: this.#leftOut,
    };
  }

  #full(): boolean {
    if (this.#turns.length + this.#toolCalls.size + this.#approvals.length < MAX_TIMELINE_ENTRIES) return false;
    this.#leftOut++;
    return true;
  }

  #now(): number {
    return round(performance.now() - this.#startedAt);
  }
}

function round(ms: number): number {
  return Math.round(ms);
}
