/** The slice of the Chat Completions wire format this provider reads and writes. */

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'low' | 'high' | 'auto' } }
  | { type: 'file'; file: { filename?: string; file_data?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** What Gemini's OpenAI-compatible endpoint adds to a call and wants back on it: the call's thought signature. */
  extra_content?: GoogleExtraContent;
}

/** Gemini's `extra_content` on a tool call (its OpenAI compatibility): Gemini 3 refuses a next turn whose calls come back without their signature. */
export interface GoogleExtraContent {
  google?: { thought_signature?: string | null } | null;
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | { type: 'text'; text: string }[] }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; refusal?: string; tool_calls?: ChatToolCall[]; reasoning_content?: string; reasoning?: string; reasoning_details?: Record<string, unknown>[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  stream_options?: { include_usage: boolean };
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean } }[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  response_format?: unknown;
  verbosity?: string;
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  reasoning_effort?: string;
  logprobs?: boolean;
  top_logprobs?: number;
  safety_identifier?: string;
  prompt_cache_key?: string;
  service_tier?: string;
}

export interface ChatToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
  /** A freeform tool's call (OpenAI's `type: "custom"`): its raw input. */
  custom?: { name?: string | null; input?: string | null } | null;
  extra_content?: GoogleExtraContent | null;
}

export interface ChatDelta {
  role?: string | null;
  content?: string | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  /** OpenRouter's: the reasoning as the model's own provider gave it, to go back with its turn (reasoning-details.ts). */
  reasoning_details?: unknown[] | null;
  tool_calls?: ChatToolCallDelta[] | null;
  /** Citations (OpenAI's search models, OpenRouter's web plugin), on the message or a chunk's delta. */
  annotations?: ChatAnnotation[] | null;
}

export interface ChatAnnotation {
  type?: string;
  url_citation?: { url?: string; title?: string; start_index?: number; end_index?: number } | null;
}

export interface ChatUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: { token: string; logprob: number; bytes?: number[] | null }[] | null;
}

export interface ChatLogprobs {
  content?: ChatTokenLogprob[] | null;
}

export interface ChatChoiceChunk {
  index?: number;
  delta?: ChatDelta | null;
  logprobs?: ChatLogprobs | null;
  finish_reason?: string | null;
}

/** One streamed chunk — or, from servers that put errors in-band, an error object. */
export interface ChatChunk {
  id?: string | null;
  model?: string | null;
  object?: string;
  choices?: ChatChoiceChunk[] | null;
  usage?: ChatUsage | null;
  error?: { message?: string; type?: string; code?: string | number | null; param?: string | null; status_code?: number | null; status?: string | null; failed_generation?: string | null } | string | null;
  message?: string;
  /** The tier the call was served at (OpenAI's own; other servers leave it out). */
  service_tier?: string | null;
}

export interface ChatCompletion {
  id?: string | null;
  model?: string | null;
  object?: string;
  choices?: { index?: number; message?: ChatDelta | null; logprobs?: ChatLogprobs | null; finish_reason?: string | null }[] | null;
  usage?: ChatUsage | null;
}
