import { readFileSync } from 'node:fs';
import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { ConfigPath, ConfigProblem } from './config-problem.ts';

/** Syntax errors past the first few are usually echoes of the first. */
const MAX_SYNTAX_PROBLEMS = 3;

/** The configuration file, parsed, with the position of every key for messages. */
export interface ConfigFile {
  path: string;
  /** The parsed value; undefined when the file could not be read or parsed. */
  value: unknown;
  /** Unreadable file, syntax errors, a top level that is not an object. */
  problems: ConfigProblem[];
  /**
   * `file:line:column` of a key (`at: 'key'`) or its value, or of the nearest
   * enclosing value the file has; null when not even the top level parsed.
   */
  locate(path: ConfigPath, at: 'key' | 'value'): string | null;
  /** Whether the file itself sets this path. */
  has(path: ConfigPath): boolean;
}

/** Reads a JSON-with-comments file (trailing commas allowed); never throws. */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { path, value: undefined, problems: [{ source: 'LOOPGATE_CONFIG', message: `LOOPGATE_CONFIG names ${path}, which cannot be read: ${reason}` }], locate: () => null, has: () => false };
  }
  return parseConfigText(path, text);
}

/** Parses file contents; `path` only names the file in messages. */
export function parseConfigText(path: string, text: string): ConfigFile {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const position = linePositions(text);
  const where = (offset: number) => `${path}:${position(offset)}`;
  const problems: ConfigProblem[] = errors.slice(0, MAX_SYNTAX_PROBLEMS).map((error) => ({
    source: where(error.offset),
    message: `${where(error.offset)}: syntax error: ${describeParseError(printParseErrorCode(error.error))}`,
  }));
  if (errors.length > MAX_SYNTAX_PROBLEMS) problems.push({ source: path, message: `${path}: ${errors.length - MAX_SYNTAX_PROBLEMS} more syntax errors after these` });
  if (errors.length === 0 && root?.type !== 'object') {
    problems.push({ source: where(root?.offset ?? 0), message: `${where(root?.offset ?? 0)}: the file must hold one JSON object ({ … })` });
  }
  const usable = errors.length === 0 && root?.type === 'object';
  if (usable) problems.push(...duplicateKeys(root, where));
  return {
    path,
    value: usable ? getNodeValue(root) : undefined,
    problems,
    locate(keyPath, at) {
      if (!root) return null;
      const node = nearestNode(root, keyPath);
      const key = node.parent?.type === 'property' ? node.parent.children?.[0] : undefined;
      return where(at === 'key' && key ? key.offset : node.offset);
    },
    has: (keyPath) => root !== undefined && findNodeAtLocation(root, [...keyPath]) !== undefined,
  };
}

/**
 * A key given twice in one object: JSON keeps the last silently, so the
 * first (often a whole block, the one the operator meant to edit) would
 * never apply and nothing would say so.
 */
function duplicateKeys(node: Node, where: (offset: number) => string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (node.type === 'object') {
    const seen = new Map<string, number>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0];
      if (!key || typeof key.value !== 'string') continue;
      const first = seen.get(key.value);
      if (first === undefined) seen.set(key.value, key.offset);
      else problems.push({ source: where(key.offset), message: `${where(key.offset)}: "${key.value}" is given twice in the same object (first at ${where(first)}); only one can apply, remove the other` });
    }
  }
  for (const child of node.children ?? []) problems.push(...duplicateKeys(child, where));
  return problems;
}

function nearestNode(root: Node, path: ConfigPath): Node {
  for (let length = path.length; length > 0; length--) {
    const node = findNodeAtLocation(root, path.slice(0, length));
    if (node) return node;
  }
  return root;
}

/** Maps a character offset to `line:column`, both counted from 1. */
function linePositions(text: string): (offset: number) => string {
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return `${low + 1}:${offset - lineStarts[low]! + 1}`;
  };
}

/** "CommaExpected" → "comma expected". */
function describeParseError(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
