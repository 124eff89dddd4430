interface Frame {
  value: object;
  depth: number;
  key: string | number | null;
  parent: Frame | null;
}

/**
 * The path to the first value nested deeper than `maxDepth` (objects and
 * arrays count one level each), or null. Walks iteratively, so a body nested
 * a million levels deep is refused rather than overflowing the stack; strings
 * and numbers are never looked into, and paths are built only for the answer.
 */
export function findTooDeep(root: unknown, maxDepth: number): (string | number)[] | null {
  if (root === null || typeof root !== 'object') return null;
  const stack: Frame[] = [{ value: root, depth: 1, key: null, parent: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const isArray = Array.isArray(frame.value);
    for (const key in frame.value) {
      const child = (frame.value as Record<string, unknown>)[key];
      if (child === null || typeof child !== 'object') continue;
      const next: Frame = { value: child, depth: frame.depth + 1, key: isArray ? Number(key) : key, parent: frame };
      if (next.depth > maxDepth) return pathOf(next);
      stack.push(next);
    }
  }
  return null;
}

function pathOf(frame: Frame): (string | number)[] {
  const path: (string | number)[] = [];
  for (let current: Frame | null = frame; current?.key != null; current = current.parent) path.push(current.key);
  return path.reverse();
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text (valid or not) opens more than `maxDepth` objects and
 * arrays at once, brackets inside string literals aside. One pass over the
 * characters without parsing, so it is cheap enough for every `arguments`
 * string of a resent history.
 */
export function jsonTextTooDeep(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === BACKSLASH) index++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) {
      inString = true;
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if ((char === CLOSE_BRACE || char === CLOSE_BRACKET) && depth > 0) {
      depth--;
    }
  }
  return false;
}

/**
 * `JSON.parse`, refusing (with a SyntaxError, as for any text that is not
 * JSON) values nested deeper than `maxDepth`: parsing deep JSON is safe, but
 * whatever later serialises the value (an upstream request body, an MCP call,
 * an event) would overflow the stack. For JSON that did not come through the
 * request's own depth check: arguments the model wrote, or a client sent as a
 * string.
 */
export function parseJsonWithinDepth(text: string, maxDepth: number): unknown {
  if (jsonTextTooDeep(text, maxDepth)) throw new SyntaxError(`JSON nested more than ${maxDepth} levels deep`);
  return JSON.parse(text);
}
