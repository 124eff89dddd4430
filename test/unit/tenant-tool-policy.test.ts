import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { AllowDenyList, parseUrl, serverUrlMatcher, toolNameMatcher } from '../../src/executors/allow-deny-list.ts';
import { EgressPolicy, EgressRefused } from '../../src/executors/mcp/egress-policy.ts';
import { TenantToolPolicy } from '../../src/executors/tenant-tool-policy.ts';
import type { OfferedTool, ToolContext, ToolExecutor } from '../../src/executors/tool-executor.ts';
import type { McpToolParam } from '../../src/protocol/create-response-request.ts';

describe('tool-name patterns', () => {
  it('match whole names, * standing for any run of characters', () => {
    const matches = (pattern: string, name: string) => toolNameMatcher(pattern)(name);
    expect(matches('tools__delete', 'tools__delete')).toBe(true);
    expect(matches('tools__delete', 'tools__delete_all')).toBe(false);
    expect(matches('tools__delete', 'mytools__delete')).toBe(false);
    expect(matches('tools__*', 'tools__add')).toBe(true);
    expect(matches('tools__*', 'tools_add')).toBe(false);
    expect(matches('*__delete', 'calc__delete')).toBe(true);
    expect(matches('*__delete', 'calc__delete_all')).toBe(false);
    expect(matches('*delete*', 'bulk_delete_rows')).toBe(true);
    expect(matches('*', 'anything-at_all')).toBe(true);
  });
});

describe('tool-name patterns on MCP tools', () => {
  const matches = (pattern: string, server: string, tool: string, list: 'allow' | 'deny') => toolNameMatcher(pattern, list)({ server, tool });

  it("judge the server and the tool apart: a label holding '__' is not the server its first part names", () => {
    // `ops__*` is the operator's server `ops`; a request's server `ops__n` joins to `ops__n__x`, which the bare pattern matched.
    expect(matches('ops__*', 'ops', 'x', 'allow')).toBe(true);
    expect(matches('ops__*', 'ops__n', 'x', 'allow')).toBe(false);
    expect(matches('ops__*', 'ops', 'n__x', 'allow')).toBe(true);
    expect(matches('ops__n__*', 'ops__n', 'x', 'allow')).toBe(true);
    expect(matches('ops__n__*', 'ops', 'n__x', 'allow')).toBe(true);
    expect(matches('*__add', 'a__b', 'add', 'allow')).toBe(true);
    expect(matches('*__add', 'calc', 'add_all', 'allow')).toBe(false);
    // A pattern with no `__` is about the whole name.
    expect(matches('*', 'ops__n', 'x', 'allow')).toBe(true);
    expect(matches('*delete*', 'ops', 'bulk_delete', 'allow')).toBe(true);
  });

  it('read a deny entry wide: it also matches the joined name, so *__delete still refuses a tool named admin__delete', () => {
    expect(matches('*__delete', 'ops', 'admin__delete', 'deny')).toBe(true);
    expect(matches('*__delete', 'ops', 'admin__delete', 'allow')).toBe(false);
    expect(matches('ops__*', 'ops__n', 'x', 'deny')).toBe(true);
  });
});

describe('MCP server URL entries', () => {
  const matches = (entry: string, url: string) => serverUrlMatcher(entry)(parseUrl(url));

  it('an origin matches every URL of that scheme, host and port', () => {
    expect(matches('https://mcp.example.com', 'https://mcp.example.com/mcp')).toBe(true);
    expect(matches('https://mcp.example.com', 'https://mcp.example.com:443/any/path?x=1')).toBe(true);
    expect(matches('https://mcp.example.com', 'http://mcp.example.com/mcp')).toBe(false);
    expect(matches('https://mcp.example.com', 'https://mcp.example.com:8443/mcp')).toBe(false);
    // A plain text prefix would take these; origins do not.
    expect(matches('https://mcp.example.com', 'https://mcp.example.com.evil.net/mcp')).toBe(false);
    expect(matches('https://mcp.example.com', 'https://mcp.example.com@evil.net/mcp')).toBe(false);
  });

  it('a path matches itself and what lies below it, segment by segment', () => {
    expect(matches('https://hub.example/team-a', 'https://hub.example/team-a')).toBe(true);
    expect(matches('https://hub.example/team-a', 'https://hub.example/team-a/mcp')).toBe(true);
    expect(matches('https://hub.example/team-a/', 'https://hub.example/team-a/mcp')).toBe(true);
    expect(matches('https://hub.example/team-a', 'https://hub.example/team-ab/mcp')).toBe(false);
    expect(matches('https://hub.example/team-a', 'https://hub.example/other/mcp')).toBe(false);
  });

  it('a path spelt with percent-escapes is the path it names (servers and proxies decode them): %61dmin is admin, %2e%2e a step up', () => {
    expect(matches('http://127.0.0.1:9000/admin', 'http://127.0.0.1:9000/%61dmin')).toBe(true);
    expect(matches('http://127.0.0.1:9000/admin', 'http://127.0.0.1:9000/%61%64%6D%69%6E/mcp')).toBe(true);
    expect(matches('http://127.0.0.1:9000/admin', 'http://127.0.0.1:9000/x/%2e%2e/admin')).toBe(true);
    expect(matches('http://127.0.0.1:9000/admin', 'http://127.0.0.1:9000/x%2F..%2Fadmin')).toBe(true);
    expect(matches('http://127.0.0.1:9000/team%20a', 'http://127.0.0.1:9000/team a/mcp')).toBe(true);
    expect(matches('http://127.0.0.1:9000/admin', 'http://127.0.0.1:9000/%61dmins')).toBe(false);
  });

  it('compares parsed URLs, so other spellings of the same address match', () => {
    expect(matches('http://127.0.0.1:9000', 'http://127.1:9000/mcp')).toBe(true);
    expect(matches('https://mcp.example.com/', 'HTTPS://MCP.Example.COM/mcp')).toBe(true);
    expect(matches('https://mcp.example.com/', 'not a url')).toBe(false);
  });
});

describe('AllowDenyList', () => {
  const list = (config: { allow?: string[]; deny?: string[] }) => new AllowDenyList(config, toolNameMatcher);

  it('no lists: everything; deny: everything else; an allow list: only what it lists; deny wins over allow', () => {
    expect(list({}).permits('a')).toBe(true);
    expect(list({ deny: ['a'] }).permits('a')).toBe(false);
    expect(list({ deny: ['a'] }).permits('b')).toBe(true);
    expect(list({ allow: ['a'] }).permits('b')).toBe(false);
    expect(list({ allow: [] }).permits('a')).toBe(false);
    expect(list({ allow: ['tools__*'], deny: ['tools__delete'] }).permits('tools__add')).toBe(true);
    expect(list({ allow: ['tools__*'], deny: ['tools__delete'] }).permits('tools__delete')).toBe(false);
  });
});

describe('TenantToolPolicy', () => {
  const executor = {} as ToolExecutor;
  const offered = (name: string, serverUrl?: string): OfferedTool => ({ definition: { type: 'function', name }, executor, presentation: { kind: 'function' }, target: null, ...(serverUrl && { serverUrl }) });
  const context = (tenant: string, tools: OfferedTool[] = [], mcpServers: McpToolParam[] = []): ToolContext => ({
    tenant,
    tools: [],
    mcpServers: mcpServers.map((tool, index) => ({ tool, index: index + 1 })),
    previousOutput: [],
    offered: new Map(tools.map((tool) => [tool.definition.name, tool])),
  });
  const policy = new TenantToolPolicy({
    '*': { tools: { deny: ['*__delete'] } },
    'team-a': { tools: { allow: ['tools__*', 'lookup'], deny: ['tools__drop'] }, mcpServerUrls: { deny: ['https://blocked.example'] } },
    'team-b': {},
  });
  const call = (name: string) => ({ callId: 'c1', name, arguments: '{}' });

  it('a tenant with an entry of its own is judged by it alone, not by "*"', () => {
    expect(policy.check(call('tools__add'), context('team-a'))).toBeNull();
    expect(policy.check(call('tools__delete'), context('team-a'))).toBeNull();
    expect(policy.check(call('tools__drop'), context('team-a'))).toMatch(/tool policy does not allow this tool/);
    expect(policy.check(call('other__add'), context('team-a'))).toMatch(/tool policy/);
    // An empty entry: no restriction at all, "*" notwithstanding.
    expect(policy.check(call('tools__delete'), context('team-b'))).toBeNull();
  });

  it('"*" applies to every tenant without an entry; without "*" such tenants are not restricted', () => {
    expect(policy.check(call('tools__delete'), context('team-c'))).toMatch(/tool policy/);
    expect(policy.check(call('tools__add'), context('team-c'))).toBeNull();
    expect(new TenantToolPolicy({ 'team-a': { tools: { deny: ['x'] } } }).check(call('x'), context('team-c'))).toBeNull();
  });

  it('the refusal names the policy, never the rule, the URL or the tenant', () => {
    const refusal = policy.check(call('tools__drop'), context('team-a'))!;
    expect(refusal).not.toMatch(/team-a|tools__|drop|blocked/);
  });

  it('checks the URL of the server an offered tool runs on, at offer and at call', () => {
    const blocked = offered('docs__search', 'https://blocked.example/mcp');
    const allowed = offered('tools__search', 'https://fine.example/mcp');
    expect(policy.offers(blocked, 'team-a')).toBe(false);
    expect(policy.offers(allowed, 'team-a')).toBe(true);
    expect(policy.offers(offered('tools__drop'), 'team-a')).toBe(false);
    const withBlocked = offered('tools__search', 'https://blocked.example/mcp');
    expect(policy.check(call('tools__search'), context('team-a', [withBlocked]))).toMatch(/MCP server/);
    expect(policy.check(call('tools__search'), context('team-a', [allowed]))).toBeNull();
  });

  it('refuses a request naming a denied MCP server URL with a 400 on tools[i].server_url', () => {
    const named = (server_url: string): McpToolParam => ({ type: 'mcp', server_label: 'x', server_url });
    expect(() => policy.checkRequest(context('team-a', [], [named('https://fine.example/mcp')]))).not.toThrow();
    let caught: unknown;
    try {
      policy.checkRequest(context('team-a', [], [named('https://fine.example/mcp'), named('https://BLOCKED.example:443/mcp')]));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ status: 400, param: 'tools[2].server_url', code: 'mcp_server_url_refused' });
    expect(() => policy.checkRequest(context('team-b', [], [named('https://blocked.example/mcp')]))).not.toThrow();
  });
});

describe('the operator\'s allowed MCP URL prefixes (mcp.allowedUrls)', () => {
  const policy = new EgressPolicy({ allowedUrlPrefixes: ['http://10.0.0.5:8000/mcp/'] });
  const allowed = (url: string) => {
    try {
      policy.check(url);
      return true;
    } catch (error) {
      if (error instanceof EgressRefused) return false;
      throw error;
    }
  };

  it('hold for the path a server reads: a spelling that steps out of the prefix (..%2F, %2e%2e) is refused like any other internal address', () => {
    expect(allowed('http://10.0.0.5:8000/mcp/tools')).toBe(true);
    expect(allowed('http://10.0.0.5:8000/%6Dcp/tools')).toBe(true);
    expect(allowed('http://10.0.0.5:8000/admin')).toBe(false);
    expect(allowed('http://10.0.0.5:8000/mcp/..%2Fadmin')).toBe(false);
    expect(allowed('http://10.0.0.5:8000/mcp/x%2F..%2F..%2Fadmin')).toBe(false);
    expect(allowed('http://10.0.0.5:8000/mcp/%2e%2e/admin')).toBe(false);
  });
});
