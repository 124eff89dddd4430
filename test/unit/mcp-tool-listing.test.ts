import type { Server as HttpServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { McpExecutor } from '../../src/executors/mcp/mcp-executor.ts';
import { McpSessionPool } from '../../src/executors/mcp/mcp-session-pool.ts';
import type { ToolContext } from '../../src/executors/tool-executor.ts';
import { startStatelessMcpServer } from '../support/stateless-mcp-server.ts';
import { waitFor } from '../support/wait-for.ts';

/** Tools as servers in the wild list them: a few to a page, some with an output schema, one without an input schema's `type`, one malformed. */
const TOOLS = [
  { name: 'plain', inputSchema: { type: 'object' } },
  { name: 'counted', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
  { name: 'untyped', inputSchema: { properties: { q: { type: 'string' } } } },
  { name: 'broken', inputSchema: 'not a schema' },
  { name: 'last', inputSchema: { type: 'object' } },
];
const PAGE = 2;

/** A real MCP server (the SDK's low-level one, stateless Streamable HTTP) paging its tools `PAGE` at a time. */
function startPagingServer(): Promise<{ url: string; server: HttpServer }> {
  return startStatelessMcpServer(() => {
    const mcp = new Server({ name: 'paging', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const start = Number(request.params?.cursor ?? 0);
      const next = start + PAGE;
      return { tools: TOOLS.slice(start, next) as never, ...(next < TOOLS.length && { nextCursor: String(next) }) };
    });
    // Every tool answers `{n: "not a number"}`: only `counted` says what its results must be.
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `ran ${request.params.name}` }], structuredContent: { n: 'not a number' } }));
    return mcp;
  });
}

describe('listing an MCP server’s tools', () => {
  const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
  let paging: Awaited<ReturnType<typeof startPagingServer>>;
  let pool: McpSessionPool;

  beforeAll(async () => {
    paging = await startPagingServer();
    pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
  });
  afterAll(async () => {
    await pool.close();
    await egress.close();
    paging.server.close();
  });

  it('reads every page; a tool whose input schema has no type is read as an object schema, a malformed one is left out alone', async () => {
    const tools = await pool.session({ url: paging.url, headers: {}, untrusted: false }, null).tools();
    expect(tools.map((tool) => tool.name)).toEqual(['plain', 'counted', 'untyped', 'last']);
    expect(tools.find((tool) => tool.name === 'untyped')!.inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
  });

  it("a tool's output schema is checked whatever page it was listed on (the SDK's listing kept only the last page's)", async () => {
    const session = pool.session({ url: paging.url, headers: {}, untrusted: false }, null);
    await session.tools();
    const signal = new AbortController().signal;
    const counted = await session.call('counted', {}, signal, 5_000);
    expect(counted).toMatchObject({ isError: true, serverLost: false });
    expect(counted.output).toContain("Structured content does not match the tool's output schema");
    expect(await session.call('last', {}, signal, 5_000)).toMatchObject({ isError: false, output: 'ran last' });
  });

  it("an operator server's tool called by a tenant is checked against the output schema the catalog listed, though the tenant's own session did not list it", async () => {
    const executor = new McpExecutor({ servers: [{ name: 'pg', url: paging.url, headers: {}, allowedTools: null, timeoutMs: null }], pool, egress, defaultTimeoutMs: 5_000, catalog: { listWaitMs: 5_000 } });
    try {
      const base: ToolContext = { tenant: 'team-a', tools: [], mcpServers: [], previousOutput: [], offered: new Map() };
      const prepared = await executor.prepare(base, new AbortController().signal);
      const context: ToolContext = { ...base, offered: new Map(prepared.offered.map((tool) => [tool.definition.name, tool])) };
      expect([...context.offered.keys()]).toContain('pg__counted');
      const result = await executor.execute({ callId: 'call_1', name: 'pg__counted', arguments: '{}' }, context, new AbortController().signal);
      expect(result.isError).toBe(true);
      expect(result.output).toContain("Structured content does not match the tool's output schema");
    } finally {
      executor.close();
    }
  });

  it("a tools/list_changed said only on a tenant's call stream has the operator's catalog list afresh, whichever of two names of one server the call went by", async () => {
    const listed = ['announce'];
    let lists = 0;
    /** Listings to refuse (a server busy, or limiting its rate) before it answers again. */
    let busyLists = 0;
    const announcing = await startStatelessMcpServer(() => {
      const mcp = new Server({ name: 'announcing', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => {
        lists++;
        if (busyLists > 0 && busyLists--) throw new Error('server busy');
        return { tools: listed.map((name) => ({ name, inputSchema: { type: 'object' as const } })) };
      });
      // Adds a tool for everyone, and says so on this call's own stream only (as FastMCP's ctx.session.send_tool_list_changed does).
      mcp.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
        listed.push(`added_${listed.length}`);
        await extra.sendNotification({ method: 'notifications/tools/list_changed' });
        return { content: [{ type: 'text', text: 'announced' }] };
      });
      return mcp;
    });
    const servers = ['a', 'b'].map((name) => ({ name, url: announcing.url, headers: {}, allowedTools: null, timeoutMs: null }));
    const executor = new McpExecutor({ servers, pool: new McpSessionPool({ listTtlMs: 300_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch }), egress, defaultTimeoutMs: 5_000, catalog: { listWaitMs: 5_000 } });
    const base: ToolContext = { tenant: 'team-a', tools: [], mcpServers: [], previousOutput: [], offered: new Map() };
    const offeredNow = async () => (await executor.prepare(base, new AbortController().signal)).offered.map((tool) => tool.definition.name);
    try {
      expect(await offeredNow()).toEqual(['a__announce', 'b__announce']);
      // A server that says its tools changed on every call is listed at most once a second for it, not on every request.
      const storm = lists;
      for (let index = 0; index < 10; index++) {
        const offered = new Map((await executor.prepare(base, new AbortController().signal)).offered.map((tool) => [tool.definition.name, tool]));
        await executor.execute({ callId: `call_storm_${index}`, name: 'a__announce', arguments: '{}' }, { ...base, offered }, new AbortController().signal);
      }
      expect(lists - storm).toBeLessThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const name of ['b__announce', 'a__announce']) {
        const before = lists;
        const offered = new Map((await executor.prepare(base, new AbortController().signal)).offered.map((tool) => [tool.definition.name, tool]));
        expect((await executor.execute({ callId: `call_${name}`, name, arguments: '{}' }, { ...base, offered }, new AbortController().signal)).output).toBe('announced');
        const added = listed.at(-1)!;
        await offeredNow();
        await waitFor(async () => (await offeredNow()).includes(`a__${added}`));
        expect(lists).toBeGreaterThan(before);
      }
      // It says its tools changed, then is too busy to list them: its calls work, so its earlier tools stay offered, and the change is listed later.
      // (Both its names, a and b, list it: each is refused.)
      busyLists = 2;
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const offered = new Map((await executor.prepare(base, new AbortController().signal)).offered.map((tool) => [tool.definition.name, tool]));
      const before = [...offered.keys()];
      await executor.execute({ callId: 'call_busy', name: 'a__announce', arguments: '{}' }, { ...base, offered }, new AbortController().signal);
      const added = listed.at(-1)!;
      await waitFor(async () => (await offeredNow()) && busyLists === 0);
      // Refused just now: the next listing it prompts is a second away, and meanwhile the earlier tools are offered, the server ready.
      expect(await offeredNow()).toEqual(before);
      expect(executor.status().map((server) => server.state)).toEqual(['ready', 'ready']);
      await waitFor(async () => (await offeredNow()).includes(`a__${added}`), 5_000);
    } finally {
      executor.close();
      announcing.server.close();
    }
  });
});
