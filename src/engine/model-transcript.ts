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

  /** Takes in the output items added since last time (all finished: calls are made between turns). */
  sync(output: readonly OutputItem[]): void {
    for (let index = this.#seen; index < output.length; index++) this.#items.push(...storedItemToInput(output[index]!));
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
