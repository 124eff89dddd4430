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
