import type { InputItem } from '../protocol/input-items.ts';
import type { CustomToolParam, FunctionToolChoice, FunctionToolParam, HostedToolChoice, TextFormatParam } from '../protocol/create-response-request.ts';
import type { UpstreamHostedToolParam, UpstreamHostedToolType } from '../protocol/hosted-tools.ts';
import type { CompactionOutputItem, HostedCallItem, TextAnnotation } from '../protocol/output-items.ts';
import type { TraceContext } from '../util/trace-context.ts';

/**
 * What the engine asks of one provider call (one "turn"). Input is expressed in
 * OpenResponses items — the gateway's own vocabulary — and each provider
 * translates it to its upstream's wire format.
 */
export interface TurnRequest {
  /** The model name as the upstream knows it (routing prefixes already removed). */
  model: string;
  instructions: string | null;
  /** The whole conversation so far, in order, references already resolved. */
  items: InputItem[];
  /** How many of `items` were inherited through `previous_response_id` (the rest are this request's `input`). */
  historyLength: number;
  tools: ModelTool[];
  /**
   * Hosted tools the upstream runs itself (`web_search`, …), as the client
   * named them: only ever set for a provider whose `runsHostedTool` said yes.
   */
  hostedTools: UpstreamHostedToolParam[];
  /** The request's `include` values about hosted calls (`web_search_call.action.sources`, …), asked of the upstream with its hosted tools. */
  hostedInclude: string[];
  toolChoice: FunctionToolChoice | null;
  /** A hosted tool the model must use, in place of `toolChoice` (which is then `required`): only ever among `hostedTools`. */
  hostedToolChoice: HostedToolChoice | null;
  /** How many hosted calls the upstream may still make in this response (`max_tool_calls`, less the tool calls made so far); absent for no limit. */
  hostedToolCallBudget?: number;
  parallelToolCalls: boolean | null;
  textFormat: TextFormatParam | null;
  verbosity: 'low' | 'medium' | 'high' | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  presencePenalty: number | null;
  frequencyPenalty: number | null;
  reasoningEffort: string | null;
  /** The reasoning summary asked for (`reasoning.summary`): what a Responses upstream is asked to write. */
  reasoningSummary: 'auto' | 'concise' | 'detailed' | null;
  /** OpenAI's `reasoning.context` and `reasoning.mode`, for a Responses upstream (the others have no such settings). */
  reasoningContext: 'auto' | 'current_turn' | 'all_turns' | null;
  reasoningMode: string | null;
  topLogprobs: number | null;
  /** Whether token log probabilities are wanted (`include: ["message.output_text.logprobs"]`). */
  logprobs: boolean;
  /** Whether the client wants reasoning it can send back (`include: ["reasoning.encrypted_content"]`): reasoning given in the clear is then sealed too (protocol/sealed-reasoning-text.ts). */
  encryptedReasoning: boolean;
  safetyIdentifier: string | null;
  promptCacheKey: string | null;
  /** The client's prompt-cache settings (`prompt_cache_options`, `prompt_cache_retention`). */
  promptCache: PromptCacheSettings;
  serviceTier: string | null;
  /** Whether the client streams. A provider may still stream upstream either way. */
  stream: boolean;
  /** `truncation: "auto"`: an upstream that truncates itself (OpenAI's Responses API) is asked to, beside the gateway's own (engine/truncating-provider.ts). */
  truncation?: 'auto';
  /** The model call's trace context, sent upstream as `traceparent`/`tracestate` headers; absent while tracing is off. */
  trace?: TraceContext;
}

/**
 * A tool as the model is offered it: a function. A freeform (`custom`) tool
 * is a function with one string parameter, `input`, for upstreams that only
 * know functions; `freeform` keeps what it was, for an upstream that takes
 * freeform tools as they are (OpenAI's Responses API), its grammar included.
 * Either way its calls reach the engine as function calls whose arguments
 * are `{"input": "<text>"}`.
 */
export type ModelTool = FunctionToolParam & { freeform?: FreeformTool };

export interface FreeformTool {
  description: string | null;
  format: CustomToolParam['format'] | null;
}

export interface PromptCacheSettings {
  /** Whether the upstream may place cache breakpoints of its own (`mode: "implicit"`, the default), or only where the client marked parts. */
  implicit: boolean;
  /** The least lifetime asked of cached prefixes. */
  ttl: '30m' | '12h' | null;
  /** The older way to ask for it. */
  retention: 'in_memory' | '24h' | null;
}

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
}

/** Why the model stopped, unified, with the upstream's own word kept beside it. */
export interface TurnFinish {
  reason: 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';
  raw: string | null;
}

/**
 * The provider-neutral stream of one turn. Tool calls are keyed by the id the
 * provider settled on, which becomes the item's `call_id`.
 */
/** A sampled token's log probability, in OpenResponses' `LogProb` shape. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

export type TurnEvent =
  /**
   * The text after this is a new assistant message, not more of the one
   * before: for upstreams that answer with several (OpenAI's Responses API:
   * a `commentary` message, then the `final_answer`), with its `phase`.
   */
  | { type: 'message.start'; phase?: 'commentary' | 'final_answer' }
  | { type: 'text.delta'; delta: string; logprobs?: TokenLogprob[] }
  | { type: 'refusal.delta'; delta: string }
  | { type: 'reasoning.delta'; delta: string }
  /** The reasoning after this is a new reasoning item, not more of the one before (an upstream that reasons in several items). */
  | { type: 'reasoning.start' }
  /**
   * Ends the current reasoning block with the opaque value the provider needs
   * to get it back byte for byte (a signature, redacted data), carried in the
   * reasoning item's `encrypted_content`. Opens the item when there was no text.
   */
  | { type: 'reasoning.encrypted'; value: string }
  /**
   * `terminal`: the model itself said this call is its last action (the text
   * tool-call protocol's `terminate` flag): once the turn's calls have run,
   * the response ends without another model call.
   */
  | { type: 'tool_call.start'; callId: string; name: string; terminal?: boolean }
  | { type: 'tool_call.delta'; callId: string; delta: string }
  | { type: 'usage'; usage: TurnUsage }
  /** What the upstream said of its answer: its own id for it and the model that produced it (for traces; nothing a client sees). */
  | { type: 'upstream.response'; id: string | null; model: string | null }
  /** The service tier the upstream says it served the call at (OpenAI's `service_tier`), which may differ from the one asked for: the response reports it. */
  | { type: 'service_tier'; tier: string }
  | { type: 'finish'; finish: TurnFinish }
  /** An annotation (a web search's `url_citation`) on the output text streamed so far. */
  | { type: 'text.annotation'; annotation: TextAnnotation }
  /**
   * A hosted tool call the upstream runs (hosted-tools.ts), opaque: added
   * when it starts, its progress events passed on as they come (`event` is
   * the upstream's event without its item id, index and sequence number),
   * done with the upstream's finished item. `item.id` is the upstream's.
   */
  | { type: 'hosted_item.added'; item: HostedCallItem }
  | { type: 'hosted_item.progress'; itemId: string; event: HostedProgressEvent }
  | { type: 'hosted_item.done'; item: HostedCallItem }
  /** The turn's answer is the conversation compacted (compaction/compacting-provider.ts), an output item of its own. */
  | { type: 'compaction'; item: CompactionOutputItem }
  /** A failure after the turn started: the response ends `failed`. */
  /** `status`: the HTTP status the upstream stated inside its error (servers that put errors in the stream), when it did; `param`: the field it named. */
  | { type: 'error'; code: string; message: string; status?: number; param?: string };

/** A hosted call's progress event (`response.web_search_call.searching`, `response.image_generation_call.partial_image`, …). */
export type HostedProgressEvent = { type: `response.${HostedCallItem['type']}${string}` } & Record<string, unknown>;

/** A started turn. Creating one already proved the upstream accepted the call. */
export type TurnStream = AsyncIterable<TurnEvent> | Iterable<TurnEvent>;

export interface ModelInfo {
  id: string;
  owned_by: string;
}

export interface Provider {
  readonly name: string;
  /**
   * Starts one model call. Resolves once the upstream's first frame is known
   * not to be an error, so failures that happen at once reject with a
   * `GatewayError` carrying the right HTTP status; later failures arrive as an
   * `error` event.
   */
  startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream>;
  /**
   * Counts the input tokens `request` would cost, by the upstream's own
   * counting endpoint, sent what `startTurn` would send. Providers whose
   * upstream has none leave it out: the gateway then estimates
   * (engine/token-estimate.ts). Failures reject with a `GatewayError`.
   */
  countInputTokens?(request: TurnRequest, signal: AbortSignal): Promise<number>;
  /**
   * Whether the upstream runs the hosted tool `type` itself (config
   * `providers.<name>.hostedTools`), so a request naming it has it offered in
   * `TurnRequest.hostedTools` rather than omitted. Absent: it runs none.
   */
  runsHostedTool?(type: UpstreamHostedToolType): boolean;
  listModels(signal: AbortSignal): Promise<ModelInfo[]>;
  close(): Promise<void>;
}
