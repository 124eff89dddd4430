import { describe, expect, it } from 'vitest';
import { allowedByRequest, requestServerHeaders, requiresApproval } from '../../src/executors/mcp/request-server-settings.ts';

const read = { name: 'read', annotations: { readOnlyHint: true } };
const write = { name: 'write', annotations: { readOnlyHint: false } };
const silent = { name: 'silent', annotations: null };

describe("a request-named MCP server's settings, read as OpenAI reads them", () => {
  it('require_approval: never exempts what it matches, always gates only what it matches, and every other tool waits by default', () => {
    const cases: [Parameters<typeof requiresApproval>[0], Record<string, boolean>][] = [
      [undefined, { read: true, write: true }],
      ['always', { read: true, write: true }],
      ['never', { read: false, write: false }],
      [{}, { read: true, write: true }],
      [{ never: {} }, { read: true, write: true }],
      [{ never: { tool_names: ['read'] } }, { read: false, write: true }],
      [{ never: { read_only: true } }, { read: false, write: true, silent: true }],
      [{ always: { tool_names: ['write'] } }, { read: false, write: true }],
      [{ always: { read_only: false } }, { read: false, write: true, silent: true }],
      [{ always: { tool_names: ['write'] }, never: { tool_names: ['write'] } }, { read: false, write: false }],
      [{ never: { tool_names: ['read', 'write'], read_only: true } }, { read: false, write: true }],
    ];
    for (const [setting, expected] of cases) {
      for (const [name, wanted] of Object.entries(expected)) {
        const tool = [read, write, silent].find((entry) => entry.name === name)!;
        expect(requiresApproval(setting, tool), `${JSON.stringify(setting)} for ${name}`).toBe(wanted);
      }
    }
  });

  it('allowed_tools: names, or a filter whose every criterion must hold; a filter naming nothing allows all', () => {
    expect([read, write, silent].filter((tool) => allowedByRequest(['write'], tool)).map((tool) => tool.name)).toEqual(['write']);
    expect([read, write, silent].filter((tool) => allowedByRequest({ read_only: true }, tool)).map((tool) => tool.name)).toEqual(['read']);
    expect([read, write, silent].filter((tool) => allowedByRequest({ read_only: false }, tool)).map((tool) => tool.name)).toEqual(['write', 'silent']);
    expect([read, write, silent].filter((tool) => allowedByRequest({ read_only: true, tool_names: ['write'] }, tool))).toEqual([]);
    expect([read, write, silent].filter((tool) => allowedByRequest({}, tool))).toHaveLength(3);
    expect([read, write, silent].filter((tool) => allowedByRequest(null, tool))).toHaveLength(3);
  });

  it('authorization is a bearer token unless the headers carry an Authorization of their own, in any case', () => {
    expect(requestServerHeaders({ authorization: 'tok' })).toEqual({ Authorization: 'Bearer tok' });
    expect(requestServerHeaders({ authorization: 'tok', headers: { 'x-key': 'k' } })).toEqual({ 'x-key': 'k', Authorization: 'Bearer tok' });
    expect(requestServerHeaders({ authorization: 'tok', headers: { AUTHORIZATION: 'Basic abc' } })).toEqual({ AUTHORIZATION: 'Basic abc' });
    expect(requestServerHeaders({ headers: null })).toEqual({});
  });
});
