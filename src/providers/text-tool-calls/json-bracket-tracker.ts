/**
 * Follows JSON text one character at a time, far enough to know where the
 * value its first bracket opened ends: brackets are counted, except inside
 * string literals (escapes included), so `{"a": "}"}` ends at its last brace.
 * It does not check the JSON is valid — `JSON.parse` does that once the value
 * is complete; mismatched brackets count alike.
 */
export class JsonBracketTracker {
  #depth = 0;
  #inString = false;
  #escaped = false;

  /** Takes the next character; true when it closed the outermost bracket. */
  feed(char: string): boolean {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (char === '\\') this.#escaped = true;
      else if (char === '"') this.#inString = false;
      return false;
    }
    if (char === '"') this.#inString = true;
    else if (char === '{' || char === '[') this.#depth++;
    else if (char === '}' || char === ']') return --this.#depth === 0;
    return false;
  }
}

/**
 * Splits text holding one or more JSON objects or arrays one after another
 * (whitespace between them) into the text of each; null when anything else
 * stands between or around them, or the last one never closes.
 */
export function splitJsonValues(text: string): string[] | null {
  const values: string[] = [];
  let tracker: JsonBracketTracker | null = null;
  let start = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (tracker) {
      if (tracker.feed(char)) {
        values.push(text.slice(start, index + 1));
        tracker = null;
      }
    } else if (char === '{' || char === '[') {
      tracker = new JsonBracketTracker();
      tracker.feed(char);
      start = index;
    } else if (!isWhitespace(char)) {
      return null;
    }
  }
  return tracker || values.length === 0 ? null : values;
}

export function isWhitespace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\t' || char === '\r';
}
