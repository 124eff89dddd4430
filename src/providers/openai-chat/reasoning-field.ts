import { GatewayError } from '../../errors/gateway-error.ts';

/**
 * The field of an assistant message that carries its reasoning back to a
 * Chat server. Servers disagree: DeepSeek and llama.cpp read (and DeepSeek's
 * tool loops require) `reasoning_content`; current vLLM and Ollama read only
 * `reasoning` and drop the other without a word (a gpt-oss tool loop then
 * loses its analysis, which OpenAI's gpt-oss guide calls crucial to tool
 * calling); Groq, Cerebras, Bedrock behind LiteLLM and OpenAI refuse a field
 * they do not know with a 400.
 *
 * So earlier reasoning goes back only to a model whose server gave its own
 * reasoning, in the field it gave it in (`auto`, learned per model from its
 * answers). A model not heard from yet is sent none; one that then asks for
 * it (DeepSeek: "Missing `reasoning_content` field") is sent it, the call
 * made again once; one that refuses the field sent gets the other, once.
 */
export type ReasoningField = 'reasoning_content' | 'reasoning';

/** What a server's answer says of its reasoning: the field it gave it in, or that it gave OpenRouter's `reasoning_details`. */
export type ReasoningHeard = ReasoningField | 'details';

const NAMED: Record<ReasoningField, RegExp> = {
  reasoning_content: /(?<![A-Za-z_])reasoning_content(?![A-Za-z_])/,
  reasoning: /(?<![A-Za-z_])reasoning(?![A-Za-z_])/,
};
const REFUSING = /unsupported|not supported|not permitted|not allowed|unknown|unrecognized|unexpected|extra (?:inputs|fields)|additional propert/i;
const WANTING = /missing|must be passed|is required|required field/i;

/** Models whose field is remembered; past it the memory starts again (a client may name any model). */
const MAX_MODELS = 256;

/** The field for each model a provider serves (one server may serve models whose templates read different fields). */
export class ReasoningFieldChoice {
  readonly #configured: 'auto' | ReasoningField;
  readonly #byModel = new Map<string, ReasoningField | null>();
  /** Models whose server gave `reasoning_details` (OpenRouter): only those get them back (Groq refuses the field). */
  readonly #withDetails = new Set<string>();

  constructor(configured: 'auto' | ReasoningField) {
    this.#configured = configured;
  }

  /** The field `model`'s earlier reasoning goes back in; null: none is sent. */
  field(model: string): ReasoningField | null {
    return this.#configured === 'auto' ? (this.#byModel.get(model) ?? null) : this.#configured;
  }

  takesDetails(model: string): boolean {
    return this.#withDetails.has(model);
  }

  /** The server answered `model`'s call with this reasoning. */
  readonly heardFrom = (model: string, what: ReasoningHeard): void => {
    if (what !== 'details') return this.heard(model, what);
    if (this.#withDetails.size >= MAX_MODELS) this.#withDetails.clear();
    this.#withDetails.add(model);
  };

  /** The server answered `model`'s call with its reasoning in `field` (null: forget it). */
  heard(model: string, field: ReasoningField | null): void {
    if (this.#configured !== 'auto' || this.#byModel.get(model) === field) return;
    if (this.#byModel.size >= MAX_MODELS) this.#byModel.clear();
    this.#byModel.set(model, field);
  }

  /**
   * The field to make `model`'s call again with after `error`, when the error
   * is about the field (`sent`: the one the call carried, null for none):
   * one it asks for, or the other of one it refused; undefined when the
   * error is about something else.
   */
  afterRefusal(error: unknown, model: string, sent: ReasoningField | null): ReasoningField | undefined {
    if (this.#configured !== 'auto' || !(error instanceof GatewayError) || error.status !== 400) return undefined;
    const message = error.message;
    // "Missing `reasoning_content` field", "must be passed back": the server wants the field.
    const wanted = WANTING.test(message) ? (['reasoning_content', 'reasoning'] as const).find((field) => NAMED[field].test(message) && field !== sent) : undefined;
    // The field by its whole name, in words of refusal: "reasoning_effort is not supported" is no refusal of `reasoning`.
    const other = wanted ?? (sent !== null && REFUSING.test(message) && !WANTING.test(message) && NAMED[sent].test(message) ? (sent === 'reasoning_content' ? 'reasoning' : 'reasoning_content') : undefined);
    if (other !== undefined) this.heard(model, other);
    return other;
  }
}
