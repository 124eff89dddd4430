import type { LoopReport } from './loop-controls-param.ts';
import type { OutputItem } from './output-items.ts';

/** `ResponseResource`: the response object, sent whole in JSON and inside lifecycle events. */

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled' | 'requires_action';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens_details: { reasoning_tokens: number };
}

export interface EchoedFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

export type EchoedToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; tools: { type: 'function'; name: string }[]; mode: 'none' | 'auto' | 'required' };

export type EchoedTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; description: string | null; schema: null; strict: boolean };

/**
 * Extension field `loopgate:truncation` (README: "Truncation"): present when
 * `truncation: "auto"` left part of the conversation out of a model call.
 * Describes the response's last model call that left anything out.
 */
export interface TruncationReport {
  /** Conversation items the model was not sent. */
  dropped_items: number;
  /** The context window the input was fitted to, in tokens. */
  context_window: number;
  /** `configured` (`contextWindow` in the configuration) or `learned` (from the upstream refusing a longer input). */
  window_source: 'configured' | 'learned';
  /** The input sent, as the gateway estimated it, in the upstream's tokens. */
  estimated_input_tokens: number;
}

export interface ResponseResource {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
  model: string;
  previous_response_id: string | null;
  /** The conversation this response's items were added to (OpenAI's field; absent without one). */
  conversation?: { id: string };
  instructions: string | null;
  output: OutputItem[];
  /** `type` as in an error envelope (response-error.ts). */
  error: { code: string; message: string; type?: string } | null;
  tools: EchoedFunctionTool[];
  tool_choice: EchoedToolChoice;
  truncation: 'auto' | 'disabled';
  parallel_tool_calls: boolean;
  text: { format: EchoedTextFormat; verbosity?: 'low' | 'medium' | 'high' };
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  temperature: number;
  reasoning: { effort: string | null; summary: string | null } | null;
  usage: Usage | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  store: boolean;
  background: boolean;
  service_tier: string;
  metadata: Record<string, string>;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  /** Hosted tools the request named that the model was not offered (README: hosted tools); absent when none. */
  'loopgate:omitted_tools'?: string[];
  'loopgate:truncation'?: TruncationReport;
  'loopgate:loop'?: LoopReport;
  /** The deployment that served the first model call, for aliases routed over several (providers/routing/). */
  'loopgate:deployment'?: string;
}
