import type { InputItem } from '../protocol/input-items.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import { storedItemToInput } from './stored-item-to-input.ts';

/**
 * What the model is shown on each call of one response: the conversation
 * before it, every item of the output so far, and the exchanges the client
 * does not see — an answer held back and the prompt that followed it
 * (a completion check, a validation retry, the limit's last call).
 */
export class ModelTranscript {
  readonly #before: readonly InputItem[];
  readonly #items: InputItem[] = [];
  /** How much of the output is already in `#items`. */
  #seen = 0;

  constructor(before: readonly InputItem[]) {
    this.#before = before;
  }

  /** The items of the next model call. */
  next(output: readonly OutputItem[], extra: readonly InputItem[] = []): InputItem[] {
    this.sync(output);
    return [...this.#before, ...this.#items, ...extra];
  }

  /**
   * Takes in the output items added since last time: one turn's (all
   * finished: calls are made between turns). An MCP call shown as one item
   * holds its output too, which follows the turn's other calls and text: one
   * turn's calls split in two is a history Anthropic refuses with thinking on.
   */
  sync(output: readonly OutputItem[]): void {
    let outputs: InputItem[] | null = null;
    for (let index = this.#seen; index < output.length; index++) {
      const item = output[index]!;
      if (item.type !== 'mcp_call') this.#items.push(...storedItemToInput(item));
      else for (const part of storedItemToInput(item)) (part.type === 'function_call_output' ? (outputs ??= []) : this.#items).push(part);
    }
    if (outputs) this.#items.push(...outputs);
    this.#seen = output.length;
  }

  /** An answer taken out of the output, then what the gateway said to it: the model sees both, the client neither. */
  hide(answer: readonly OutputItem[], prompt: string): void {
    for (const item of answer) this.#items.push(...storedItemToInput(item));
    this.#items.push(userMessage(prompt));
  }
}

export function userMessage(text: string): InputItem {
  return { type: 'message', role: 'user', content: text };
}
