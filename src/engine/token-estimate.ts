import type { InputItem } from '../protocol/input-items.ts';
import type { TurnRequest } from '../providers/provider.ts';

/**
 * The gateway's estimate of a model call's input tokens, for upstreams that
 * cannot count (Chat Completions) and for `truncation: "auto"`. It counts,
 * with OpenAI's o200k_base encoding, the text of the Chat Completions request
 * the turn becomes (openai-chat/convert-to-chat-request.ts), framed the way
 * OpenAI's published counting recipe frames chat messages:
 *
 * - every message — the instructions, each system/developer/user/assistant
 *   message, each function output (a `tool` message) — costs 3 tokens plus
 *   its text; each function call 3 plus its name and its arguments;
 * - an image costs 765 tokens (85 with `detail: "low"`), a file a token per
 *   4 characters of its data; reasoning items cost nothing (Chat upstreams
 *   are not sent them);
 * - the tool definitions cost their text as the request carries them, JSON
 *   (`{"type":"function","function":{name, description, parameters, strict}}`);
 * - the answer's priming costs 3.
 *
 * For OpenAI models the estimate is within a few percent; other tokenizers
 * (Claude's, Llama's) split text differently, which is why truncation
 * calibrates it against the counts upstream errors report.
 */

/** The cost of one message's framing (role and separators). */
export const TOKENS_PER_MESSAGE = 3;
/** The assistant reply's priming, once per request. */
export const REPLY_PRIMING_TOKENS = 3;
/** An image at high or automatic detail: OpenAI's cost of a 1024×1024 image (85 + 4 tiles × 170). */
export const IMAGE_TOKENS = 765;
export const LOW_DETAIL_IMAGE_TOKENS = 85;
/** Characters of (base64) file data per token. */
export const FILE_CHARACTERS_PER_TOKEN = 4;

/** A turn's input, measured: what every call carries, and each item's share. */
export interface TurnMeasure {
  /** Instructions, tool definitions and reply priming: kept whatever is truncated. */
  fixed: number;
  /** The cost of each of `request.items`, in order. */
  items: number[];
  total: number;
}

export type TextMeasure = (text: string) => number;

let tokenizer: Promise<TextMeasure> | null = null;

/**
 * o200k_base's token count, its ~0.4 s of tables loaded on first use only:
 * never on a request that does not count. Special-token text counts as text.
 */
export function loadTokenCounter(): Promise<TextMeasure> {
  tokenizer ??= import('gpt-tokenizer/encoding/o200k_base').then(({ countTokens }) => {
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => (text === '' ? 0 : countTokens(text, options));
  });
  return tokenizer;
}

/** Whether the tokenizer's tables are loaded (or loading). */
export function tokenCounterLoading(): boolean {
  return tokenizer !== null;
}

/** The estimate of a turn's input tokens (the tokenizer is loaded on first use). */
export async function estimateTurnTokens(request: TurnRequest): Promise<TurnMeasure> {
  return measureTurn(request, boundedCount(await loadTokenCounter()));
}

/** Characters of one turn's texts the tokenizer counts; the rest are counted at the rate it found. */
const EXACT_CHARACTERS_PER_TURN = 262_144;
/** The longest run without whitespace the tokenizer is given at once. */
const LONGEST_RUN = 1_024;
const LONG_RUN = new RegExp(`\\S{${LONGEST_RUN + 1},}`, 'g');

/**
 * The tokenizer, within bounds of work: it is on the request path (rate
 * limits, truncation, `input_tokens`), and its worst inputs cost it dearly —
 * a run of one letter quadratically (1 MiB of `x` held the event loop for
 * minutes), random letters about 2 s a MiB. Runs without whitespace are
 * counted in pieces of `LONGEST_RUN` characters (real text's tokens are a
 * few characters long), and past `EXACT_CHARACTERS_PER_TURN` characters a turn's
 * texts are counted at the tokens per character of what was counted.
 */
export function boundedCount(count: TextMeasure): TextMeasure {
  let left = EXACT_CHARACTERS_PER_TURN;
  let counted = { characters: 0, tokens: 0 };
  const exact = (text: string) => {
    const tokens = countInPieces(count, text);
    left -= text.length;
    counted = { characters: counted.characters + text.length, tokens: counted.tokens + tokens };
    return tokens;
  };
  return (text) => {
    if (text.length <= left) return exact(text);
    if (left > 0) exact(text.slice(0, left));
    return Math.ceil((text.length * counted.tokens) / Math.max(1, counted.characters));
  };
}

function countInPieces(count: TextMeasure, text: string): number {
  if (text.length <= LONGEST_RUN) return count(text);
  let tokens = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    tokens += count(text.slice(from, run.index));
    for (let at = run.index; at < run.index + run[0].length; at += LONGEST_RUN) tokens += count(text.slice(at, Math.min(at + LONGEST_RUN, run.index + run[0].length)));
    from = run.index + run[0].length;
  }
  return tokens + count(text.slice(from));
}

/**
 * An upper bound on `estimateTurnTokens`, with no tokenizer: a token is at
 * least one byte of UTF-8, so counting bytes instead of tokens never counts
 * less. A turn under its budget by this measure needs no tokenizer at all.
 */
export function boundTurnTokens(request: TurnRequest): TurnMeasure {
  return measureTurn(request, (text) => Buffer.byteLength(text, 'utf8'));
}

/** Measures a turn with `measure` applied to each text the Chat request would carry. */
export function measureTurn(request: TurnRequest, measure: TextMeasure): TurnMeasure {
  let fixed = REPLY_PRIMING_TOKENS;
  if (request.instructions) fixed += TOKENS_PER_MESSAGE + measure(request.instructions);
  if (request.tools.length > 0) {
    const definitions = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description ?? undefined, parameters: tool.parameters ?? undefined, strict: tool.strict ?? undefined },
    }));
    fixed += measure(JSON.stringify(definitions));
  }
  if (request.hostedTools.length > 0) fixed += measure(JSON.stringify(request.hostedTools));
  const items = request.items.map((item) => measureItem(item, measure));
  return { fixed, items, total: items.reduce((sum, tokens) => sum + tokens, fixed) };
}

function measureItem(item: InputItem, measure: TextMeasure): number {
  switch (item.type) {
    case 'message':
      return TOKENS_PER_MESSAGE + measureContent(item.content, measure);
    case 'function_call':
      return TOKENS_PER_MESSAGE + measure(item.name) + measure(item.arguments);
    case 'function_call_output':
      return TOKENS_PER_MESSAGE + measureContent(item.output, measure);
    case 'web_search_call':
    case 'file_search_call':
    case 'code_interpreter_call':
    case 'image_generation_call': {
      // Sent back whole to the Responses upstream that ran it; a generated image (`result`) is billed as an image, not as its base64 text.
      const { result: _image, ...rest } = item;
      return TOKENS_PER_MESSAGE + measure(JSON.stringify(rest));
    }
    default:
      // Reasoning is not sent to Chat upstreams; the engine turns every other kind into calls and outputs first.
      return 0;
  }
}

type Content = Extract<InputItem, { type: 'message' }>['content'] | Extract<InputItem, { type: 'function_call_output' }>['output'];

function measureContent(content: Content, measure: TextMeasure): number {
  if (typeof content === 'string') return measure(content);
  let tokens = 0;
  for (const part of content) {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        tokens += measure(part.text);
        break;
      case 'refusal':
        tokens += measure(part.refusal);
        break;
      case 'input_image':
        tokens += part.detail === 'low' ? LOW_DETAIL_IMAGE_TOKENS : IMAGE_TOKENS;
        break;
      case 'input_file':
        tokens += Math.ceil((part.file_data?.length ?? 0) / FILE_CHARACTERS_PER_TOKEN);
        break;
      default:
        // Video is refused by every provider here.
        break;
    }
  }
  return tokens;
}
