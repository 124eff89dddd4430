import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressRefusalIn, EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { describeFailure, McpSessionPool } from '../../src/executors/mcp/mcp-session-pool.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { waitFor } from '../support/wait-for.ts';

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
    await Promise.all([pool.session(target, 'tenant-a').tools(), pool.session(target, 'tenant-a').tools(), pool.session({ ...target, headers: { 'x-k': '1' } }, 'tenant-a').tools()]);
    expect(server.methods.filter((method) => method === 'initialize').length - before).toBe(1);
    await pool.close();
  });

  it('keeps each tenant its own session of a server: a stateful server never carries one tenant\'s calls in another\'s session', async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const before = server.methods.filter((method) => method === 'initialize').length;
    const target = { url, headers: { 'x-k': 'shared' }, untrusted: false };
    const [a, b] = [pool.session(target, 'team-a'), pool.session(target, 'team-b')];
    expect(a).not.toBe(b);
    expect(pool.session(target, 'team-a')).toBe(a);
    // Each connects for its own calls (the listing, no tenant's state, they share).
    await Promise.all([a, b].map((session) => session.call('add', { a: 1, b: 2 }, new AbortController().signal, 5_000)));
    expect(server.methods.filter((method) => method === 'initialize').length - before).toBe(2);
    await pool.close();
  });

  it("a tools/list_changed heard on a tenant's session (sent on the stream of the call that changed the tools) tells the listing's holder", async () => {
    server.extraTools.push((mcp) =>
      mcp.registerTool('announce', { description: 'Says the tools changed, on its own session only.', inputSchema: {} }, async (_args, extra) => {
        await extra.sendNotification({ method: 'notifications/tools/list_changed' });
        return { content: [{ type: 'text', text: 'announced' }] };
      }),
    );
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const target = { url, headers: { 'x-k': 'list-changes' }, untrusted: false };
    const lister = pool.session(target, null);
    await lister.tools();
    const version = lister.toolsVersion;
    expect((await pool.session(target, 'team-a').call('announce', {}, new AbortController().signal, 5_000)).output).toBe('announced');
    await waitFor(() => lister.toolsVersion > version);
    await pool.close();
  });

  it("one tenant's listing is never another's: a server that enables a tool for one session lists it to that session only", async () => {
    server.extraTools.push((mcp) =>
      mcp.registerTool('unlock', { description: 'Enables a tool for this session.', inputSchema: {} }, async () => {
        mcp.registerTool('vault', { description: 'Only for the session that unlocked it.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'secret' }] }));
        return { content: [{ type: 'text', text: 'unlocked' }] };
      }),
    );
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const target = { url, headers: { 'x-k': 'per-session' }, untrusted: false };
    const [a, b] = [pool.session(target, 'team-a'), pool.session(target, 'team-b')];
    expect((await a.call('unlock', {}, new AbortController().signal, 5_000)).output).toBe('unlocked');
    await waitFor(async () => (await a.tools()).some((tool) => tool.name === 'vault'));
    expect((await b.tools()).map((tool) => tool.name)).not.toContain('vault');
    expect((await a.tools()).map((tool) => tool.name)).toContain('vault');
    await pool.close();
  });

  it("ends a cancelled or timed-out call's own HTTP exchange: the server, which sends no answer to a cancelled call, holds no stream open for it", async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const session = pool.session({ url, headers: { 'x-k': 'cancel' }, untrusted: false }, 'tenant-a');
    // The session's own standing stream (its GET) is open once a call has gone through.
    expect((await session.call('add', { a: 1, b: 1 }, new AbortController().signal, 5_000)).output).toBe('2');
    const settled = server.openExchanges;
    for (let round = 0; round < 3; round++) {
      const client = new AbortController();
      const cancelled = session.call('slow', { ms: 60_000, label: `cancel-${round}` }, client.signal, 30_000);
      await waitFor(() => server.calls.some((call) => (call.args as { label?: string }).label === `cancel-${round}`));
      client.abort();
      expect((await cancelled).isError).toBe(true);
      const timedOut = await session.call('slow', { ms: 60_000, label: `timeout-${round}` }, new AbortController().signal, 200);
      expect(timedOut.output).toMatch(/timed out/i);
    }
    await waitFor(() => server.cancelledCalls.filter((label) => /^(cancel|timeout)-/.test(label)).length === 6);
    await waitFor(() => server.openExchanges <= settled);
    // The session lives on: the next call goes through it.
    expect((await session.call('add', { a: 2, b: 3 }, new AbortController().signal, 5_000)).output).toBe('5');
    await pool.close();
  });

  it("describes what is not text in a tool's result rather than handing the model its base64", async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 100_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const result = await pool.session({ url, headers: {}, untrusted: false }, 'tenant-a').call('snapshot', {}, new AbortController().signal, 30_000);
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
    const first = pool.session({ url, headers: { user: 'a' }, untrusted: false }, 'tenant-a');
    await first.tools();
    await pool.session({ url, headers: { user: 'b' }, untrusted: false }, 'tenant-a').tools();
    pool.session({ url, headers: { user: 'a' }, untrusted: false }, 'tenant-a');
    await pool.session({ url, headers: { user: 'c' }, untrusted: false }, 'tenant-a').tools();
    expect(pool.size).toBe(2);
    // 'b' was the least recently used; 'a' survived because it was used again.
    expect(pool.session({ url, headers: { user: 'a' }, untrusted: false }, 'tenant-a')).toBe(first);
    await pool.close();
  });

  it('a session pushed out of the pool finishes the calls it is running first, and every session it closes is ended on the server', async () => {
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 1, untrustedFetch: egress.fetch });
    const ended = server.endedSessions.length;
    const busy = pool.session({ url, headers: { user: 'busy' }, untrusted: false }, 'tenant-a');
    const running = busy.call('slow', { ms: 400 }, new AbortController().signal, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A second user's session takes the only place: the first is retired, not cut off mid-call.
    await pool.session({ url, headers: { user: 'next' }, untrusted: false }, 'tenant-a').tools();
    expect(server.endedSessions.length).toBe(ended);
    const result = await running;
    expect(result).toMatchObject({ isError: false });
    await waitFor(() => server.endedSessions.length === ended + 1, 2_000, 10);
    // Closing the pool (a shutdown) ends the rest.
    await pool.close();
    expect(server.endedSessions.length).toBe(ended + 2);
  });

  it('a failure says its HTTP status (a bare 401 and a proxy error page read apart), and an error result with nothing to say still reads as an error', async () => {
    const unauthorized = createServer((_req, res) => res.writeHead(401).end());
    await new Promise<void>((resolve) => unauthorized.listen(0, '127.0.0.1', resolve));
    server.extraTools.push((mcp) => mcp.registerTool('fail_silently', { description: 'Fails, saying nothing.', inputSchema: {} }, async () => ({ content: [], isError: true })));
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    try {
      const failure = await pool.session({ url: `http://127.0.0.1:${(unauthorized.address() as AddressInfo).port}/mcp`, headers: {}, untrusted: false }, 'tenant-a').tools().then(() => null, (error: Error) => error);
      expect(describeFailure(failure)).toMatch(/^HTTP 401 Unauthorized: /);
      const silent = await pool.session({ url, headers: { 'x-silent': '1' }, untrusted: false }, 'tenant-a').call('fail_silently', {}, new AbortController().signal, 5_000);
      expect(silent).toMatchObject({ isError: true, output: 'The tool reported an error without a message.' });
    } finally {
      await pool.close();
      unauthorized.close();
    }
  });

  it('a server that fails both transports leaves nothing behind: no event stream reconnecting for good after the failure', async () => {
    // Streamable HTTP refused (404), and the older transport's event stream cut at once: the SSE fallback fails.
    let streams = 0;
    const broken = createServer((request, response) => {
      if (request.method !== 'GET') return void response.writeHead(404).end();
      streams++;
      request.socket.destroy();
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    try {
      await expect(pool.session({ url: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/mcp`, headers: {}, untrusted: false }, 'tenant-a').tools()).rejects.toThrow();
      const afterFailure = streams;
      // The SDK's EventSource retries after about 3 s when nothing closes it.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(streams).toBe(afterFailure);
    } finally {
      await pool.close();
      broken.close();
    }
  });

  it("the egress policy's refusal of the older transport (its event stream redirected to a forbidden address) is the failure told, not the newer transport's 404", async () => {
    const redirecting = createServer((request, response) => {
      if (request.method !== 'GET') return void response.writeHead(404).end();
      response.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`;
    const allowing = new EgressPolicy({ allowedUrlPrefixes: [base] });
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: allowing.fetch });
    try {
      const failure = await pool.session({ url: `${base}sse`, headers: {}, untrusted: true }, 'tenant-a').tools().then(() => null, (error: unknown) => error);
      expect(egressRefusalIn(failure)?.message).toMatch(/169\.254\.169\.254 is an address the egress policy refuses/);
    } finally {
      await pool.close();
      await allowing.close();
      redirecting.close();
    }
  });

  it("errors never carry the credentials of the server's URL (a token in its query), whatever the server echoes", async () => {
    // A broken server that quotes the request back, as proxies' error pages do.
    const echo = createServer((req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`bad request to ${req.url}`));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    try {
      const session = pool.session({ url: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/mcp?token=query-secret-4711`, headers: {}, untrusted: false }, 'tenant-a');
      const failure = await session.tools().then(() => null, (error: Error) => error);
      expect(failure?.message).toContain('bad request to /mcp?token=');
      expect(failure?.message).not.toContain('query-secret-4711');
    } finally {
      await pool.close();
      echo.close();
    }
  });

  it('a session the server expired (404 to its id) is replaced by a new one, and the call or listing goes through on it', async () => {
    const pool = new McpSessionPool({ listTtlMs: 1, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    const target = { url, headers: { 'x-expiry': '1' }, untrusted: false };
    const session = pool.session(target, 'tenant-a');
    await session.tools();
    const initializes = () => server.methods.filter((method) => method === 'initialize').length;
    const before = initializes();
    server.expireSessions();
    expect(await session.call('add', { a: 2, b: 3 }, new AbortController().signal, 5_000)).toMatchObject({ isError: false, output: '5' });
    expect(initializes() - before).toBe(1);
    server.expireSessions();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await session.tools()).map((tool) => tool.name)).toContain('add');
    expect(initializes() - before).toBe(2);
    // Still the pool's session for that server, not a stray one.
    expect(pool.session(target, 'tenant-a')).toBe(session);
    await pool.close();
  });

  it("one call's stream cut while the server lives on (a proxy's idle timeout) leaves the session and its other calls alone", async () => {
    server.extraTools.push((mcp) => mcp.registerTool('cut_short', { description: 'Its stream is cut.', inputSchema: {} }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { content: [{ type: 'text', text: 'too late' }] };
    }));
    server.cutCallsOf.add('cut_short');
    const pool = new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch });
    // A session of its own, made after the tool was registered.
    const session = pool.session({ url, headers: { 'x-cut': '1' }, untrusted: false }, 'tenant-a');
    const signal = new AbortController().signal;
    const [healthy, cut] = await Promise.all([session.call('slow', { ms: 600, label: 'beside' }, signal, 5_000), session.call('cut_short', {}, signal, 1_500)]);
    expect(healthy).toMatchObject({ isError: false, output: 'slept 600 ms (beside)' });
    expect(cut.isError).toBe(true);
    // The session stayed open: the next call needs no new handshake.
    const initializes = server.methods.filter((method) => method === 'initialize').length;
    expect(await session.call('add', { a: 1, b: 1 }, signal, 5_000)).toMatchObject({ output: '2' });
    expect(server.methods.filter((method) => method === 'initialize').length).toBe(initializes);
    await pool.close();
  });
});
