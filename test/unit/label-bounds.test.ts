import { describe, expect, it } from 'vitest';
import { LabelBounds } from '../../src/observability/label-bounds.ts';

describe('LabelBounds', () => {
  const bounds = new LabelBounds({ models: ['fast', 'default-model'], providers: ['openai'], tenants: ['team-a'], mcpServers: ['docs', 'docs__v2'] });

  it('keeps configured names and counts everything else as other', () => {
    expect([bounds.model('fast'), bounds.model('default-model'), bounds.model('gpt-4.1'), bounds.model('')]).toEqual(['fast', 'default-model', 'other', 'other']);
    expect([bounds.provider('openai'), bounds.provider('anthropic')]).toEqual(['openai', 'other']);
    expect([bounds.tenant('team-a'), bounds.tenant('team-z')]).toEqual(['team-a', 'other']);
  });

  it('names the MCP server of a tool call: operator servers by name (the longest that fits), request-named servers as request, other executors none', () => {
    expect(bounds.toolServer('docs', 'mcp')).toBe('docs');
    expect(bounds.toolServer('docs__v2', 'mcp')).toBe('docs__v2');
    expect(bounds.toolServer(null, 'mcp')).toBe('request');
    expect(bounds.toolServer('weather', 'mcp')).toBe('request');
    expect(bounds.toolServer('docs', 'sandbox')).toBe('none');
  });

  it('keeps known upstream error codes and folds invented ones into other', () => {
    expect(['upstream_timeout', 'rate_limit_exceeded', 'context_length_exceeded'].map((code) => bounds.upstreamCode(code))).toEqual(['upstream_timeout', 'rate_limit_exceeded', 'context_length_exceeded']);
    expect(bounds.upstreamCode('req_8f3a1c_quota_for_org_42')).toBe('other');
  });
});
