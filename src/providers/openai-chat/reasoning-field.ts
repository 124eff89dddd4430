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

export class ReasoningFieldChoice {
  #field: ReasoningField;
  readonly #fixed: boolean;

  constructor(configured: 'auto' | ReasoningField) {
    this.#fixed = configured !== 'auto';
    this.#field = configured === 'auto' ? 'reasoning_content' : configured;
  }

  get field(): ReasoningField {
    return this.#field;
  }

  /** The server answered with its reasoning in `field`. */
  readonly heard = (field: ReasoningField): void => {
    if (!this.#fixed) this.#field = field;
  };

  /** Whether `error` is the server refusing the field it was sent (then the other one is chosen, and the call may go again). */
  refused(error: unknown, sent: ReasoningField): boolean {
    // The field by its whole name: "reasoning_effort is not supported" is no refusal of `reasoning`.
    if (this.#fixed || !(error instanceof GatewayError) || error.status !== 400 || !NAMED[sent].test(error.message)) return false;
    this.#field = sent === 'reasoning_content' ? 'reasoning' : 'reasoning_content';
    return true;
  }
}
