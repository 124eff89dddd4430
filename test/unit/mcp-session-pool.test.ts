import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { McpSessionPool } from '../../src/executors/mcp/mcp-session-pool.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';

describe('McpSessionPool', () => {
  const server = new McpTestServer();
  let url: string;
  const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
  beforeAll(async () => {
    url = await server.start();
  });
  afterAll(async () => {
    await egress.close();
    await server.close();
  });

  it('reuses one session per server and headers: one initialize, one tools/list for many uses', async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const before = server.methods.filter((method) => method === 'initialize').length;
    const target = { url, headers: { 'x-k': '1' }, untrusted: false };
    await Promise.all([pool.session(target).tools(), pool.session(target).tools(), pool.session({ ...target, headers: { 'x-k': '1' } }).tools()]);
    expect(server.methods.filter((method) => method === 'initialize').length - before).toBe(1);
    await pool.close();
  });

  it('keeps at most maxSessions open, closing the least recently used', async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 2, untrustedFetch: egress.fetch });
    const first = pool.session({ url, headers: { user: 'a' }, untrusted: false });
    await first.tools();
    await pool.session({ url, headers: { user: 'b' }, untrusted: false }).tools();
    pool.session({ url, headers: { user: 'a' }, untrusted: false });
    await pool.session({ url, headers: { user: 'c' }, untrusted: false }).tools();
    expect(pool.size).toBe(2);
    // 'b' was the least recently used; 'a' survived because it was used again.
    expect(pool.session({ url, headers: { user: 'a' }, untrusted: false })).toBe(first);
    await pool.close();
  });
});
