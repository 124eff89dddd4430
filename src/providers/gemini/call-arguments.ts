import { findTooDeep } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';

type Task = { text: string } | { value: unknown };

/**
 * A function call's `args` as the `arguments` text the gateway carries.
 * Gemini sends them as a JSON object, not text, so they must be serialised
 * here; JSON.stringify recurses and overflows the stack on arguments nested
 * thousands of levels deep, so those are written out iteratively (the loop
 * then refuses them as too deep, as arguments from any other upstream).
 */
export function callArgumentsText(args: unknown): string {
  if (findTooDeep(args, REQUEST_LIMITS.maxJsonDepth) === null) return JSON.stringify(args);
  const out: string[] = [];
  const tasks: Task[] = [{ value: args }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const value = task.value;
    if (value === null || typeof value !== 'object') {
      out.push(JSON.stringify(value) ?? 'null');
    } else if (Array.isArray(value)) {
      out.push('[');
      tasks.push({ text: ']' });
      for (let index = value.length - 1; index >= 0; index--) {
        tasks.push({ value: value[index] });
        if (index > 0) tasks.push({ text: ',' });
      }
    } else {
      out.push('{');
      tasks.push({ text: '}' });
      const entries = Object.entries(value).filter(([, entry]) => entry !== undefined);
      for (let index = entries.length - 1; index >= 0; index--) {
        tasks.push({ value: entries[index]![1] });
        tasks.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(entries[index]![0])}:` });
      }
    }
  }
  return out.join('');
}
