import { GatewayError } from '../../errors/gateway-error.ts';

/**
 * The field of an assistant message that carries its reasoning back to a
 * Chat server. Servers disagree: DeepSeek and llama.cpp read (and DeepSeek's
 * tool loops require) `reasoning_content`; current vLLM and Ollama read only
 * `reasoning` and drop the other without a word (a gpt-oss tool loop then
 * loses its analysis, which OpenAI's gpt-oss guide calls crucial to tool
 * calling); Groq refuses `reasoning_content` with a 400. Each server names
 * the field in its own answers, so the field it sends is the one it is sent
 * back in (`auto`), `reasoning_content` until it has said; a 400 naming the
 * field sent means the other one (the call goes again once, with it).
 */
export type ReasoningField = 'reasoning_content' | 'reasoning';

const NAMED: Record<ReasoningField, RegExp> = {
  reasoning_content: /(?<![A-Za-z_])reasoning_content(?![A-Za-z_])/,
  reasoning: /(?<![A-Za-z_])reasoning(?![A-Za-z_])/,
};

/** Models whose field is remembered; past it the memory starts again (a client may name any model). */
const MAX_MODELS = 256;

/** The field for each model a provider serves (one server may serve models whose templates read different fields). */
const REFUSING = /unsupported|not supported|not permitted|not allowed|unknown|unrecognized|unexpected|extra (?:inputs|fields)|additional propert/i;
const WANTING = /missing|must be passed|is required|required field/i;

export class ReasoningFieldChoice {
  readonly #configured: 'auto' | ReasoningField;
  readonly #byModel = new Map<string, ReasoningField>();

  constructor(configured: 'auto' | ReasoningField) {
    this.#configured = configured;
  }

  field(model: string): ReasoningField {
    return this.#configured === 'auto' ? (this.#byModel.get(model) ?? 'reasoning_content') : this.#configured;
  }

  /** The server answered `model`'s call with its reasoning in `field`. */
  heard(model: string, field: ReasoningField): void {
    if (this.#configured !== 'auto' || this.#byModel.get(model) === field) return;
    if (this.#byModel.size >= MAX_MODELS) this.#byModel.clear();
    this.#byModel.set(model, field);
  }

  /** Whether `error` is the server refusing the field `model`'s call was sent (then the other one is chosen, and the call may go again). */
  refused(error: unknown, model: string, sent: ReasoningField): boolean {
    // The field by its whole name: "reasoning_effort is not supported" is no refusal of `reasoning`.
    if (this.#configured !== 'auto' || !(error instanceof GatewayError) || error.status !== 400 || !NAMED[sent].test(error.message)) return false;
    // DeepSeek names the field it wants ("Missing `reasoning_content` field", "must be passed back"): only words of refusal count.
    if (!REFUSING.test(error.message) || WANTING.test(error.message)) return false;
    this.heard(model, sent === 'reasoning_content' ? 'reasoning' : 'reasoning_content');
    return true;
  }
}
