const OPEN = '<think>';
const CLOSE = '</think>';

/** A piece of the answer's content: the model's thinking, or its text. */
export interface ContentPiece {
  kind: 'reasoning' | 'text';
  text: string;
}

/**
 * Reasoning models served without a reasoning parser (vLLM or llama.cpp
 * without one, older Ollama, many OpenAI-compatible hosts) write their
 * thinking into the content, as `<think>…</think>` before the answer. Read
 * as text, it would be shown as the answer and scanned for tool calls. This
 * splits a content stream that opens with `<think>` (after blanks) into the
 * thinking, as reasoning, and the text after `</think>`; any other content
 * passes through as text. Tags split across chunks are held until they are
 * whole.
 */
export class InlineThinking {
  /** `answer`: after `</think>`, before the answer's first non-blank character. */
  #state: 'undecided' | 'thinking' | 'answer' | 'text' = 'undecided';
  /** Content held while it may still be (the start of) a tag. */
  #held = '';

  /** Whether content now passes through as text, whatever it holds (the caller may skip `accept`). */
  get passesThrough(): boolean {
    return this.#state === 'text';
  }

  /** The pieces `content` makes, in order (none while a tag is still incomplete). */
  accept(content: string): ContentPiece[] {
    if (this.#state === 'text') return [{ kind: 'text', text: content }];
    if (this.#state === 'answer') return this.#answer(content);
    const pieces: ContentPiece[] = [];
    let rest = this.#held + content;
    this.#held = '';
    if (this.#state === 'undecided') {
      const start = rest.trimStart();
      if (start.length < OPEN.length && OPEN.startsWith(start)) {
        this.#held = rest;
        return pieces;
      }
      if (!start.startsWith(OPEN)) {
        this.#state = 'text';
        return [{ kind: 'text', text: rest }];
      }
      this.#state = 'thinking';
      rest = start.slice(OPEN.length);
    }
    const end = rest.indexOf(CLOSE);
    if (end >= 0) {
      if (end > 0) pieces.push({ kind: 'reasoning', text: rest.slice(0, end) });
      this.#state = 'answer';
      pieces.push(...this.#answer(rest.slice(end + CLOSE.length)));
      return pieces;
    }
    const keep = partialTagAtEnd(rest);
    if (rest.length > keep) pieces.push({ kind: 'reasoning', text: rest.slice(0, rest.length - keep) });
    this.#held = rest.slice(rest.length - keep);
    return pieces;
  }

  /** The blank lines models put between their thinking and the answer are not the answer's. */
  #answer(content: string): ContentPiece[] {
    const text = content.replace(/^\s+/, '');
    if (!text) return [];
    this.#state = 'text';
    return [{ kind: 'text', text }];
  }

  /**
   * What is held, given up now that something else came (a tool call): it
   * keeps its place before that, and content that had not yet begun with
   * `<think>` now never does.
   */
  settle(): ContentPiece[] {
    const held = this.end();
    if (this.#state === 'undecided' || this.#state === 'answer') this.#state = 'text';
    return held;
  }

  /** What is still held when the content ends: a tag that never completed is the text it was. */
  end(): ContentPiece[] {
    const held = this.#held;
    this.#held = '';
    if (!held) return [];
    return [{ kind: this.#state === 'thinking' ? 'reasoning' : 'text', text: held }];
  }
}

/** How many characters at the end of `text` could begin `</think>`. */
function partialTagAtEnd(text: string): number {
  for (let length = Math.min(CLOSE.length - 1, text.length); length > 0; length--) {
    if (CLOSE.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}
