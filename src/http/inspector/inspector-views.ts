import type { ResponseStatus } from '../../protocol/response-resource.ts';

/**
 * What the inspector's data endpoints answer (openapi/loopgate-extensions.json:
 * `InspectorResponse`, `InspectorTimeline`). Times inside a response are
 * milliseconds from its start, so the page needs no clock of its own.
 */

/** One response in the list: who, what, how it went, what it cost. */
export interface InspectorResponse {
  object: 'loopgate:inspector.response';
  id: string;
  tenant: string;
  model: string;
  /** The provider that served it; null when read back from the store. */
  provider: string | null;
  background: boolean;
  status: ResponseStatus;
  /** Unix seconds. */
  created_at: number;
  /** Final, or so far while it runs; null when unknown (a stored response that never finished). */
  duration_ms: number | null;
  /** Model turns; null when read back from the store (turns are not stored). */
  turns: number | null;
  tool_calls: number;
  failed_tool_calls: number;
  tokens: { input: number; output: number; total: number } | null;
  error: { code: string; message: string } | null;
  incomplete_reason: string | null;
}

export interface InspectorTurn {
  turn: number;
  started_ms: number;
  /** Null while the model call runs. */
  duration_ms: number | null;
  /** The finish reason as the upstream gave it; null while running, or when the call broke off. */
  finish: string | null;
  tool_calls: number | null;
}

export interface InspectorToolCall {
  /** The turn whose model asked for it: 0 for calls of a paused turn run when the response was continued; null when read back from the store. */
  turn: number | null;
  call_id: string;
  name: string;
  /** `mcp`, … (the executor's kind); null when read back from the store. */
  executor: string | null;
  started_ms: number | null;
  duration_ms: number | null;
  /** Null while running. */
  status: 'running' | 'completed' | 'failed' | null;
  /** The error as the client saw it (cleaned of internals), bounded. */
  error: string | null;
}

export interface InspectorApproval {
  turn: number | null;
  call_id: string;
  name: string;
  at_ms: number | null;
}

/** One response as a timeline of its turns, tool calls and approvals. */
export interface InspectorTimeline {
  object: 'loopgate:inspector.timeline';
  /** `live`: watched on this replica as it ran, with timings; `stored`: rebuilt from the stored response's items. */
  source: 'live' | 'stored';
  response: InspectorResponse;
  turns: InspectorTurn[];
  tool_calls: InspectorToolCall[];
  approvals: InspectorApproval[];
  /** Entries left out because the response had more than the inspector keeps per response. */
  left_out: number;
}

/** Who looks: an admin key sees every tenant, any other key its own. */
export interface InspectorViewer {
  tenant: string;
  admin: boolean;
}

export function canSee(viewer: InspectorViewer, tenant: string): boolean {
  return viewer.admin || viewer.tenant === tenant;
}

/** Longest tool error text the inspector keeps. */
export const MAX_ERROR_CHARS = 500;

export function boundError(text: string): string {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… [truncated]` : text;
}
