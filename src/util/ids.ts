import { randomUUID } from 'node:crypto';

/** Opaque ids in OpenAI's style: a type prefix and 32 hex characters. */
export function newId(prefix: 'resp' | 'conv' | 'msg' | 'fc' | 'fco' | 'rs' | 'cmp' | 'call' | 'req' | 'mcp' | 'mcpl' | 'mcpr' | 'ctc' | 'ctco' | 'tsc' | 'tso' | 'hc'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
