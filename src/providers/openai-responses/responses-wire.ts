import type { HostedCallItemType } from '../../protocol/hosted-tools.ts';

/**
 * The parts of OpenAI's Responses API wire format this provider reads and
 * writes. Fields are optional where upstreams (Azure, compatible servers) are
 * known to leave them out; everything read is checked before use.
 */

export interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

export interface ResponsesLogprob {
  token: string;
  logprob: number;
  bytes?: number[];
  top_logprobs?: { token: string; logprob: number; bytes?: number[] }[];
}

export type ResponsesOutputItem =
  | {
      type: 'message';
      id?: string;
      phase?: string | null;
      content?: ({ type: 'output_text'; text: string; logprobs?: ResponsesLogprob[]; annotations?: unknown[] } | { type: 'refusal'; refusal: string })[];
    }
  | { type: 'function_call'; id?: string; call_id: string; name: string; arguments?: string }
  /** A freeform tool's call: its input is raw text (freeform-tools.ts). */
  | { type: 'custom_tool_call'; id?: string; call_id: string; name: string; input?: string }
  | {
      type: 'reasoning';
      id?: string;
      summary?: { type: 'summary_text'; text: string }[];
      content?: { type: 'reasoning_text'; text: string }[] | null;
      encrypted_content?: string | null;
    }
  /** A hosted tool's call (`web_search_call`, …), passed through whole (protocol/hosted-tools.ts). */
  | { type: HostedCallItemType; id?: string; status?: string; [field: string]: unknown }
  /** Items this provider does not translate. */
  | { type: string & {}; id?: string };

export interface ResponsesBody {
  id?: string;
  model?: string;
  status?: 'completed' | 'incomplete' | 'failed' | 'in_progress' | 'queued' | 'cancelled';
  output?: ResponsesOutputItem[];
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string | null; message?: string } | null;
  /** The tier the call was served at; `response.created` says the one asked for. */
  service_tier?: string | null;
}

/** The streaming events read; others are ignored by design (see ResponsesEventTranslator). */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.queued'; response: ResponsesBody }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponsesBody }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: ResponsesOutputItem }
  | { type: 'response.output_text.delta'; item_id: string; delta: string; logprobs?: ResponsesLogprob[] }
  | { type: 'response.refusal.delta'; item_id: string; delta: string }
  | { type: 'response.function_call_arguments.delta'; item_id: string; delta: string }
  | { type: 'response.custom_tool_call_input.delta'; item_id: string; delta: string }
  | { type: 'response.custom_tool_call_input.done'; item_id: string; input: string }
  | { type: 'response.reasoning_summary_text.delta' | 'response.reasoning_text.delta'; item_id: string; delta: string }
  | { type: 'response.output_text.annotation.added'; item_id: string; annotation: unknown }
  | { type: 'error'; code?: string | null; message?: string; error?: { code?: string | null; type?: string | null; message?: string } | null }
  | { type: string & {} };

/** One input item as the Responses API takes it. */
export type ResponsesInputItem = Record<string, unknown> & { type: string };

export interface ResponsesRequest {
  model: string;
  input: ResponsesInputItem[];
  instructions?: string;
  stream: boolean;
  store: boolean;
  include?: string[];
  tools?: unknown[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  max_tool_calls?: number;
  text?: { format?: unknown; verbosity?: string };
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_logprobs?: number;
  reasoning?: { effort?: string; summary?: string; context?: string; mode?: string };
  safety_identifier?: string;
  truncation?: 'auto';
  prompt_cache_key?: string;
  prompt_cache_options?: { mode?: 'explicit'; ttl?: '30m' | '12h' };
  prompt_cache_retention?: 'in_memory' | '24h';
  service_tier?: string;
}
