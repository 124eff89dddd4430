import { describe, expect, it } from 'vitest';
import { GatewayConfig, resolveConfig } from '../../src/config/load-config.ts';
import { gatesAnyTool, needsApproval, type OperatorApprovalSetting } from '../../src/executors/mcp/operator-approval.ts';

/** Tools as MCP servers describe themselves, one per combination of the two hints (absent = MCP's default). */
const tools = {
  readOnly: { name: 'lookup', annotations: { readOnlyHint: true } },
  // MCP: destructiveHint only means something when readOnlyHint is false; a read-only tool never waits under the annotation modes.
  readOnlyClaimingDestructive: { name: 'peek', annotations: { readOnlyHint: true, destructiveHint: true } },
  destructive: { name: 'delete_record', annotations: { readOnlyHint: false, destructiveHint: true } },
  additive: { name: 'append_log', annotations: { readOnlyHint: false, destructiveHint: false } },
  additiveByDestructiveHintOnly: { name: 'annotate', annotations: { destructiveHint: false } },
  unannotated: { name: 'add', annotations: null },
  emptyAnnotations: { name: 'noop', annotations: {} },
  // Only a real boolean is a hint: a string "true" is no promise to change nothing.
  stringHints: { name: 'odd', annotations: { readOnlyHint: 'true', destructiveHint: 'false' } },
} as const;

type ToolKind = keyof typeof tools;

const waitsUnder = (setting: OperatorApprovalSetting) => (Object.keys(tools) as ToolKind[]).filter((kind) => needsApproval(setting, tools[kind]));

describe('needsApproval: modes × MCP annotations', () => {
  it('"never" lets every tool run', () => {
    expect(waitsUnder('never')).toEqual([]);
  });

  it('"always" makes every tool wait, read-only ones included', () => {
    expect(waitsUnder('always')).toEqual(Object.keys(tools));
  });

  it('"writes": everything not annotated readOnlyHint: true waits', () => {
    expect(waitsUnder('writes')).toEqual(['destructive', 'additive', 'additiveByDestructiveHintOnly', 'unannotated', 'emptyAnnotations', 'stringHints']);
  });

  it('"destructive": only tools that are not read-only and not annotated destructiveHint: false wait (MCP defaults: may write, may destroy)', () => {
    expect(waitsUnder('destructive')).toEqual(['destructive', 'unannotated', 'emptyAnnotations', 'stringHints']);
  });

  it('the object form without a mode gates only the tools it names under "always"', () => {
    expect(waitsUnder({ always: ['lookup', 'append_log'] })).toEqual(['readOnly', 'additive']);
  });

  it('named tools win over the mode, both ways', () => {
    expect(waitsUnder({ mode: 'writes', never: ['append_log', 'add'] })).toEqual(['destructive', 'additiveByDestructiveHintOnly', 'emptyAnnotations', 'stringHints']);
    expect(waitsUnder({ mode: 'destructive', always: ['lookup'] })).toEqual(['readOnly', 'destructive', 'unannotated', 'emptyAnnotations', 'stringHints']);
    expect(waitsUnder({ mode: 'always', never: ['lookup'] })).toEqual(Object.keys(tools).filter((kind) => kind !== 'readOnly'));
  });
});

describe('gatesAnyTool: which servers show their calls as MCP items', () => {
  it('is false only when nothing can ever wait', () => {
    expect(gatesAnyTool('never')).toBe(false);
    expect(gatesAnyTool({})).toBe(false);
    expect(gatesAnyTool({ mode: 'never', always: [] })).toBe(false);
    for (const setting of ['always', 'writes', 'destructive', { always: ['x'] }, { mode: 'writes' }] as OperatorApprovalSetting[]) expect(gatesAnyTool(setting), JSON.stringify(setting)).toBe(true);
  });
});

describe('mcp.servers[].requireApproval in the configuration', () => {
  const server = (requireApproval: string) => ({ MCP_SERVERS: `[{"name":"ops","url":"https://mcp.example/mcp","requireApproval":${requireApproval}}]` });
  const problemsOf = (environment: Record<string, string>) => {
    const resolution = resolveConfig(environment);
    if (resolution.ok) throw new Error('expected problems, the configuration was valid');
    return resolution.problems.map((problem) => problem.message);
  };

  it('defaults to "never" and takes every mode and the object form as given', () => {
    expect(GatewayConfig.parse({ mcp: { servers: [{ name: 'a', url: 'https://a.example/mcp' }] } }).mcp.servers[0]!.requireApproval).toBe('never');
    for (const setting of ['"always"', '"writes"', '"destructive"', '{"always":["delete_record"]}', '{"mode":"writes","never":["append_log"]}']) {
      const resolution = resolveConfig(server(setting));
      expect(resolution.ok, setting).toBe(true);
      expect(resolution.ok && resolution.config.mcp.servers[0]!.requireApproval).toEqual(JSON.parse(setting));
    }
  });

  it('keeps the old spelling require_approval working, with a warning', () => {
    const resolution = resolveConfig({ OPENAI_API_KEY: 'sk-1', MCP_SERVERS: '[{"name":"ops","url":"https://mcp.example/mcp","require_approval":"writes"}]' });
    expect(resolution.ok && resolution.config.mcp.servers[0]!.requireApproval).toBe('writes');
    expect(resolution.warnings.map((warning) => warning.message)).toEqual(['MCP_SERVERS[0].require_approval is the old spelling of requireApproval; it still works, but rename it']);
    expect(GatewayConfig.parse({ mcp: { servers: [{ name: 'a', url: 'https://a.example/mcp', require_approval: { always: ['x'] } }] } }).mcp.servers[0]!.requireApproval).toEqual({ always: ['x'] });
  });

  it('refuses what it cannot mean, saying what it must be', () => {
    const mustBe = 'must be "never", "always", "writes" or "destructive", or { "mode": one of those, "always": [tool names], "never": [tool names] }';
    expect(problemsOf(server('"sometimes"'))).toEqual([`MCP_SERVERS[0].requireApproval ${mustBe}, got "sometimes"`]);
    expect(problemsOf(server('{"mode":"often"}'))).toEqual([`MCP_SERVERS[0].requireApproval ${mustBe}, got {"mode":"often"}`]);
    expect(problemsOf(server('{"mode":"writes","mod":"x"}'))).toEqual(['MCP_SERVERS[0].requireApproval is invalid (Unrecognized key: "mod"), got {"mode":"writes","mod":"x"}']);
    expect(problemsOf(server('{"mode":"always","always":["a","b"],"never":["b"]}'))).toEqual([
      'MCP_SERVERS[0].requireApproval is invalid (names "b" in both "always" and "never"), got {"mode":"always","always":["a","b"],"never":["b"]}',
    ]);
    // OpenAI's request-side {never} means "all others wait"; here a mode must say so.
    expect(problemsOf(server('{"never":["lookup"]}'))).toEqual([
      'MCP_SERVERS[0].requireApproval is invalid (lists tools under "never" but gives no "mode" that would make them wait; add "mode": "always", "writes" or "destructive"), got {"never":["lookup"]}',
    ]);
    expect(problemsOf({ MCP_SERVERS: '[{"name":"x","url":"https://a.example/mcp","require_approval":"sometimes"}]' })).toEqual([`MCP_SERVERS[0].require_approval ${mustBe}, got "sometimes"`]);
  });
});
