import { createHash } from 'node:crypto';

const SEPARATOR = '__';
const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A tool inside a group (a client's namespace, an MCP server) as the model
 * calls it: `<group>__<name>`; or, where that is not a name models accept
 * (over 64 characters, or with characters such as `.` or `/` that MCP tool
 * names may hold), its first 55 characters made safe and a hash of the
 * whole — the same every time, so history resent later maps to the same name.
 */
export function joinedToolName(group: string, name: string): string {
  const joined = `${group}${SEPARATOR}${name}`;
  if (MODEL_TOOL_NAME.test(joined)) return joined;
  const hash = createHash('sha256').update(`${group}\0${name}`).digest('hex').slice(0, 8);
  return `${joined.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}
