import type { RecordedRequest, UpstreamReply } from '../scripted-chat-upstream.ts';

/** One model turn, said once, rendered in each upstream's own wire format. */
export interface ModelTurn {
  text?: string;
  /** The text streamed in these pieces instead (joined when the upstream call is not streamed). */
  textPieces?: string[];
  calls?: { id: string; name: string; args: Record<string, unknown> }[];
  /** The usage this turn reports (default 10 input, 5 output); `reasoning` only where the upstream reports it (`reportsReasoningTokens`). */
  usage?: TurnTokens;
}

/** A turn's tokens: `cached` is part of `input`, `reasoning` part of `output`. */
export interface TurnTokens {
  input: number;
  output: number;
  /** Default 0. */
  cached?: number;
  /** Default 0. */
  reasoning?: number;
}

/** What the model was shown, flattened the same way for every upstream. */
export type Seen =
  | { kind: 'system'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'call'; id: string; name: string; args: unknown }
  | { kind: 'result'; id: string; content: string };

/** A function tool the upstream was offered. */
export interface OfferedTool {
  name: string;
  description?: string;
  /** Its parameters' JSON Schema, as sent. */
  parameters: unknown;
}

/** The upstream's tool choice in one shape: `names` when it is limited to (or forced to) named functions. */
export interface ToolChoiceSeen {
  mode: 'auto' | 'required' | 'none';
  names?: string[];
}

/** The answer format the upstream was asked for: a JSON Schema, or any JSON object. */
export type FormatSeen = { type: 'json_schema'; schema: unknown } | { type: 'json_object' };

export type JsonReply = Extract<UpstreamReply, { kind: 'json' }>;

/** The upstream APIs the gateway speaks. */
export type FlavorName = 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';

/**
 * One upstream API as the suites need it: configured, scripted (`render`,
 * refusals) and read back (`seen` and the other readers), so that a suite
 * never has to know a wire format itself.
 */
export interface ProviderFlavor<Name extends FlavorName = FlavorName> {
  name: Name;
  /** The model name clients use; it routes to this flavor. */
  model: string;
  /** The name of this flavor's provider in `config` (metrics, logs and the inspector report it). */
  provider: string;
  /** Gateway configuration pointing this flavor's provider at the scripted upstream. */
  /**
   * Gateway configuration pointing this flavor's provider at the scripted upstream;
   * `hostedTools` overrides which hosted tools it runs, where the provider runs any.
   */
  config(upstreamBaseUrl: string, options?: { hostedTools?: string[] }): Record<string, unknown>;
  /** Whether the upstream runs hosted web_search itself in its default configuration (OpenAI's Responses API), so the gateway offers it. */
  runsWebSearch: boolean;
  render(request: RecordedRequest, turn: ModelTurn): UpstreamReply;
  /** This upstream's own finish reasons for `render`'s turns: one that called tools, one that answered. */
  finish: { tools: string; done: string };
  /** What `render`'s answers say of themselves: the upstream model, and the answer's id. */
  answer: { model: string; id: RegExp };
  seen(request: RecordedRequest): Seen[];
  /** The model the request names (in the body, or in Gemini's path). */
  requestedModel(request: RecordedRequest): string;
  /** Whether the request asks for a streamed answer. */
  streamed(request: RecordedRequest): boolean;
  /** The function tools offered, in order. */
  offeredTools(request: RecordedRequest): OfferedTool[];
  /** The tool choice sent; null when the request leaves it to the upstream's default. */
  toolChoice(request: RecordedRequest): ToolChoiceSeen | null;
  /** Whether the request carries any tool setting at all (tools, a tool choice, parallel calls). */
  mentionsTools(request: RecordedRequest): boolean;
  /** The answer format asked for, null when none. */
  format(request: RecordedRequest): FormatSeen | null;
  /** An HTTP error in this upstream's own envelope (and its own error type for that status). */
  refusal(status: number, message: string): JsonReply;
  /** This upstream refusing a prompt of `tokens` over a window of `limit`, in its own recorded words. */
  tooLong(tokens: number, limit: number): JsonReply;
  /** Whether `tooLong` names the window (OpenAI's Responses API says only that the input is too long). */
  tooLongNamesWindow: boolean;
  /** The upstream refusing at once, before any content, and the HTTP status the client must get. */
  failAtOnce(): { reply: UpstreamReply; status: number };
  /** A streamed turn that sends `text`, then fails; `code` is the error code the gateway reports for that failure. */
  failMidStream(text: string): { reply: UpstreamReply; code: string };
  /** How many of `render`'s streamed pieces for a text-only turn get the answer's first text out (for a stream that stalls after it). */
  piecesThroughFirstText: number;
  /** The upstream's own input token count endpoint: how a call to it looks, and its answer; null where the API has none (the gateway estimates). */
  tokenCount: { isCount(request: RecordedRequest): boolean; reply(tokens: number): UpstreamReply } | null;
  /** Whether this upstream reports reasoning tokens (Anthropic's Messages API does not). */
  reportsReasoningTokens: boolean;
}

export function textPiecesOf(turn: ModelTurn): string[] {
  return turn.textPieces ?? (turn.text ? [turn.text] : []);
}

/** The text of content that is a string or a list of parts carrying `text`. */
export function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((part: any) => part.text ?? part.refusal ?? '').join('') : '';
}

/** OpenAI's error envelope, as Chat Completions and the Responses API both send it. */
export function openaiRefusal(status: number, message: string, code: string | null = null, param: string | null = null): JsonReply {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { kind: 'json', status, body: { error: { message, type, param, code } } };
}
