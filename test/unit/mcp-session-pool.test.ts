import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { McpSessionPool } from '../../src/executors/mcp/mcp-session-pool.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';

describe('McpSessionPool', () => {
  const server = new McpTestServer();
  let url: string;
  const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
  /** 60,000 bytes of PNG-ish data: 80,000 characters of base64. */
  const screenshot = Buffer.alloc(60_000, 7).toString('base64');
  beforeAll(async () => {
    // What a browser tool answers: a line of text, a screenshot, and what it saved.
    server.extraTools.push((mcp) =>
      mcp.registerTool('snapshot', { description: 'Takes a screenshot.', inputSchema: {} }, async () => ({
        content: [
          { type: 'text', text: 'Took a screenshot of https://example.com.' },
          { type: 'image', data: screenshot, mimeType: 'image/png' },
          { type: 'audio', data: Buffer.from('RIFF....WAVE').toString('base64'), mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'file:///tmp/shot.png', name: 'shot.png', mimeType: 'image/png', description: 'the saved file' },
          { type: 'resource', resource: { uri: 'file:///tmp/page.html', mimeType: 'text/html', text: '<title>Example Domain</title>' } },
          { type: 'resource', resource: { uri: 'file:///tmp/page.pdf', mimeType: 'application/pdf', blob: Buffer.alloc(2048).toString('base64') } },
        ],
      })),
    );
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

  it("describes what is not text in a tool's result rather than handing the model its base64", async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 100_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const result = await pool.session({ url, headers: {}, untrusted: false }).call('snapshot', {}, new AbortController().signal, 30_000);
    expect(result).toEqual({
      isError: false,
      serverLost: false,
      output: [
        'Took a screenshot of https://example.com.',
        '[image (image/png, 59 KB), not shown to the model]',
        '[audio (audio/wav, 12 bytes), not shown to the model]',
        '[resource link: shot.png file:///tmp/shot.png (image/png): the saved file]',
        '<title>Example Domain</title>',
        '[resource file:///tmp/page.pdf (application/pdf, 2 KB), not shown to the model]',
      ].join('\n'),
    });
    expect(result.output).not.toContain(screenshot.slice(0, 100));
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
