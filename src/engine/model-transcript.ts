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
  /** Outputs of the paused turn's calls, taken out of the history to follow the calls that turn goes on with (see the constructor). */
  #held: InputItem[] = [];

  /**
   * `joining`: ids of a paused turn's calls whose outputs already stand in
   * `before`, when the response goes on with more calls of that same turn
   * (the MCP calls the client has just approved). Their outputs are moved to
   * follow those calls, as one turn's calls and outputs: in a history split
   * in two, the approved calls would read as a turn of their own, which
   * Anthropic refuses with thinking on.
   */
  constructor(before: readonly InputItem[], joining: ReadonlySet<string> = NONE) {
    if (joining.size === 0) {
      this.#before = before;
      return;
    }
    const kept: InputItem[] = [];
    for (const item of before) (item.type === 'function_call_output' && joining.has(item.call_id) ? this.#held : kept).push(item);
    this.#before = kept;
  }

  /** The items of the next model call. */
  next(output: readonly OutputItem[], extra: readonly InputItem[] = []): InputItem[] {
    this.sync(output);
    return [...this.#before, ...this.#items, ...extra];
  }

  /**
   * Takes in the output items added since last time: one turn's (all
   * finished: calls are made between turns), its calls' outputs after all of
   * its calls and text. An MCP call shown as one item holds its output too,
   * and a server-run call's output item may come before another call of the
   * turn: one turn's calls split in two is a history Anthropic refuses with
   * thinking on.
   */
  sync(output: readonly OutputItem[]): void {
    let outputs: InputItem[] | null = null;
    for (let index = this.#seen; index < output.length; index++) {
      for (const part of storedItemToInput(output[index]!)) (part.type === 'function_call_output' ? (outputs ??= []) : this.#items).push(part);
    }
    if (this.#held.length > 0) {
      this.#items.push(...this.#held);
      this.#held = [];
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

const NONE: ReadonlySet<string> = new Set();

export function userMessage(text: string): InputItem {
  return { type: 'message', role: 'user', content: text };
}
