import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';

import { freePort } from '../support/redis.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { ScriptedChatUpstream, textReply, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { sleep, waitFor } from '../support/wait-for.ts';
import { qualifiedToolName } from '../../src/executors/mcp/mcp-executor.ts';

/** What an operator tool's call came to, as its mcp_call says: the error, else the output. */
const callResult = (response: { output: any[] }): string => {
  const call = response.output.find((item) => item.type === 'mcp_call');
  return call.error ?? call.output;
};

/** Accepts TCP connections and never answers a byte: the server that used to stall every request. */
class BlackHole {
  accepted = 0;
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;

  async start(): Promise<string> {
    this.#server = createServer((socket) => {
      this.accepted++;
      this.#sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}

/** Log lines a gateway wrote, parsed. */
class LogCapture {
  readonly lines: Record<string, any>[] = [];
  write(line: string): void {
    this.lines.push(JSON.parse(line));
  }
  about(server: string): Record<string, any>[] {
    return this.lines.filter((line) => line.mcp_server === server);
  }
}

/** Calls `name` once with `args`, then answers with what the tool returned (JSON, as for non-streaming requests). */
function modelCalling(name: string, args: Record<string, unknown>): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool').map((message) => message.content);
    const message =
      results.length === 0
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name, arguments: JSON.stringify(args) } }] }
        : { role: 'assistant', content: `saw: ${results.join(' | ')}` };
    return { kind: 'json', body: { choices: [{ index: 0, message, finish_reason: results.length === 0 ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } } };
  };
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1]!;


describe('MCP faults: no operator server can stall unrelated requests', () => {
  const upstream = new ScriptedChatUpstream(textReply('plain answer'));
  const healthy = new McpTestServer();
  const blackHole = new BlackHole();
  let upstreamUrl: string;
  let healthyUrl: string;
  let blackHoleUrl: string;
  const gateways: RunningGateway[] = [];
  const start = async (mcp: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const logs = new LogCapture();
    const gateway = await startGateway(upstreamUrl, { logLevel: 'debug', mcp, ...extra }, {}, [], logs);
    gateways.push(gateway);
    return { gateway, logs, client: new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 }) };
  };

  beforeAll(async () => {
    [upstreamUrl, healthyUrl, blackHoleUrl] = await Promise.all([upstream.start(), healthy.start(), blackHole.start()]);
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  });
  afterAll(async () => {
    await Promise.all([upstream.close(), healthy.close(), blackHole.close()]);
  });

  it('a black-hole server: plain requests answer fast from the very first one, its neighbour\'s tools are offered, it is named once in the log and in /readyz', async () => {
    upstream.setScript(textReply('plain answer'));
    const { gateway, logs, client } = await start({
      servers: [
        { name: 'healthy', url: healthyUrl },
        { name: 'hole', url: blackHoleUrl },
      ],
      connectTimeoutMs: 1_500,
      listWaitMs: 300,
      retryBaseMs: 60_000,
    });
    const latencies: number[] = [];
    for (let index = 0; index < 20; index++) {
      const started = performance.now();
      const response = await client.responses.create({ model: 'm', input: `question ${index}` });
      latencies.push(performance.now() - started);
      assertValidResponse(response);
      expect(response.output_text).toBe('plain answer');
    }
    // The first request waits at most listWaitMs for the silent server; none waits after that.
    expect(percentile(latencies, 95)).toBeLessThan(1_000);
    expect(Math.max(...latencies)).toBeLessThan(1_500);
    const offered = upstream.requests.at(-1)!.body.tools.map((tool: any) => tool.function.name);
    expect(offered).toContain('healthy__add');
    expect(offered.some((name: string) => name.startsWith('hole__'))).toBe(false);

    await waitFor(() => logs.about('hole').length > 0);
    const warned = logs.about('hole').filter((line) => line.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ origin: new URL(blackHoleUrl).origin, msg: expect.stringContaining('unavailable') });
    expect(warned[0]!.error).toMatch(/1500 ms/);

    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as any;
    expect(body.dependencies.mcp_servers).toEqual([
      { name: 'healthy', origin: new URL(healthyUrl).origin, state: 'ready', tools: expect.any(Number) },
      { name: 'hole', origin: new URL(blackHoleUrl).origin, state: 'unavailable', tools: 0, error: expect.any(String), retry_in_ms: expect.any(Number) },
    ]);
  });

  it('a closed port: warned, left out, retried with back-off (no connection attempts meanwhile), and back when it answers', async () => {
    const port = await freePort();
    const lateUrl = `http://127.0.0.1:${port}/mcp`;
    upstream.setScript(textReply('ok'));
    const { gateway, logs, client } = await start({ servers: [{ name: 'late', url: lateUrl }], retryBaseMs: 1_500, retryMaxMs: 1_500 });
    await waitFor(() => logs.about('late').some((line) => line.level === 40));
    expect((await client.responses.create({ model: 'm', input: 'x' })).output_text).toBe('ok');
    expect(upstream.requests.at(-1)!.body.tools).toBeUndefined();
    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(200);
    const state = ((await ready.json()) as any).dependencies.mcp_servers[0];
    expect(state).toMatchObject({ name: 'late', origin: new URL(lateUrl).origin, state: 'unavailable', error: expect.any(String) });

    // Comes up on that port: the background retry finds it, one info line, its tools are offered again.
    const late = new McpTestServer();
    await late.start(port);
    try {
      await waitFor(() => logs.about('late').some((line) => line.level === 30));
      await client.responses.create({ model: 'm', input: 'y' });
      expect(upstream.requests.at(-1)!.body.tools.map((tool: any) => tool.function.name)).toContain('late__add');
      // Failed retries before it came back were debug lines: one warn for the whole outage.
      expect(logs.about('late').filter((line) => line.level === 40)).toHaveLength(1);
    } finally {
      await late.close();
    }
  });

  const connectSettleMs = 1_000;

  it('the breaker: a failing server is not contacted during its back-off, whatever the traffic', async () => {
    const hole = new BlackHole();
    const url = await hole.start();
    try {
      upstream.setScript(textReply('ok'));
      const { logs, client } = await start({ servers: [{ name: 'flaky', url }], connectTimeoutMs: 300, retryBaseMs: 30_000, listWaitMs: 100 });
      await waitFor(() => logs.about('flaky').some((line) => line.level === 40));
      // The failed attempt may still be closing a second connection (the transport's fallback): count from when it has settled.
      await sleep(connectSettleMs);
      const attempts = hole.accepted;
      for (let index = 0; index < 10; index++) await client.responses.create({ model: 'm', input: `q${index}` });
      expect(hole.accepted).toBe(attempts);
    } finally {
      await hole.close();
    }
  });

  it('a tool call to a server that stops answering gets an error output within the server\'s own timeout', async () => {
    upstream.setScript(modelCalling('healthy__slow', { ms: 30_000 }));
    const { client } = await start({ servers: [{ name: 'healthy', url: healthyUrl, timeoutMs: 700 }] });
    const started = performance.now();
    const response = await client.responses.create({ model: 'm', input: 'go' });
    const elapsed = performance.now() - started;
    assertValidResponseWithMcpItems(response);
    expect(callResult(response)).toMatch(/700 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(650);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('a tool call to a server that turned into a black hole after listing gets an error output within the server\'s timeoutMs', async () => {
    const proxy = new TcpProxy(healthyUrl);
    await proxy.start();
    try {
      upstream.setScript(modelCalling('proxied__add', { a: 1, b: 2 }));
      const { gateway, client } = await start({ servers: [{ name: 'proxied', url: `http://127.0.0.1:${proxy.port}/mcp`, timeoutMs: 700 }], retryBaseMs: 60_000 });
      await waitFor(async () => ((await (await fetch(`${gateway.origin}/readyz`)).json()) as any).dependencies.mcp_servers[0].state === 'ready');
      proxy.blackHole();
      const started = performance.now();
      const response = await client.responses.create({ model: 'm', input: 'add them' });
      const elapsed = performance.now() - started;
      assertValidResponseWithMcpItems(response);
      expect(callResult(response)).toMatch(/700 ms|timed out/);
      expect(response.output_text).toMatch(/^saw: /);
      expect(elapsed).toBeGreaterThanOrEqual(650);
      expect(elapsed).toBeLessThan(3_000);
    } finally {
      await proxy.close();
    }
  });

  it('a server that dies mid-call: the call fails at once rather than at its timeout, and the server is left out of requests, named in /readyz and in one warn line', async () => {
    const proxy = new TcpProxy(healthyUrl);
    await proxy.start();
    try {
      upstream.setScript(modelCalling('dying__slow', { ms: 5_000, label: 'dies' }));
      const { gateway, logs, client } = await start({ servers: [{ name: 'dying', url: `http://127.0.0.1:${proxy.port}/mcp`, timeoutMs: 20_000 }], retryBaseMs: 60_000 });
      const mcpState = async () => ((await (await fetch(`${gateway.origin}/readyz`)).json()) as any).dependencies.mcp_servers[0];
      await waitFor(async () => (await mcpState()).state === 'ready');
      const started = performance.now();
      const pending = client.responses.create({ model: 'm', input: 'go' });
      await waitFor(() => healthy.calls.some((call) => (call.args as { label?: string }).label === 'dies'));
      await proxy.cut();
      const response = await pending;
      assertValidResponseWithMcpItems(response);
      // The tool alone would take 5 s, its timeout 20 s.
      expect(performance.now() - started).toBeLessThan(4_000);
      expect(callResult(response)).toMatch(/Connection closed/);
      // The call went out and was cut off: whether it took effect is unknown, as for a call cut by its timeout.
      expect(response.output.find((item: any) => item.type === 'mcp_call')).toMatchObject({ status: 'incomplete', error: expect.stringContaining('whether the call took effect is unknown') });
      expect(response.output_text).toMatch(/^saw: /);
      await waitFor(async () => (await mcpState()).state === 'unavailable');
      expect((await mcpState()).error).toMatch(/ECONNREFUSED/);
      expect(logs.about('dying').filter((line) => line.level === 40)).toEqual([expect.objectContaining({ msg: expect.stringContaining('MCP server unavailable') })]);
    } finally {
      await proxy.close();
    }
  });

  it('a server on the older HTTP+SSE transport: down, it is left out and named in /readyz as a Streamable HTTP one is; restarted, the first call goes through on a new session', async () => {
    const legacy = new McpTestServer('sse');
    const legacyUrl = await legacy.start();
    const port = Number(new URL(legacyUrl).port);
    try {
      const { gateway, client } = await start({ servers: [{ name: 'legacy', url: legacyUrl, timeoutMs: 5_000 }], retryBaseMs: 200, retryMaxMs: 200 });
      const mcpState = async () => ((await (await fetch(`${gateway.origin}/readyz`)).json()) as any).dependencies.mcp_servers[0];
      await waitFor(async () => (await mcpState()).state === 'ready');
      upstream.setScript(modelCalling('legacy__add', { a: 1, b: 2 }));
      expect((await client.responses.create({ model: 'm', input: 'add' })).output_text).toBe('saw: 3');

      // Restarted: its sessions are gone (a POST to the old one is a 404); the next call must not fail for it.
      await legacy.close();
      await legacy.start(port);
      const afterRestart = await client.responses.create({ model: 'm', input: 'add' });
      expect(afterRestart.output_text).toBe('saw: 3');

      // Down: the failed call has it checked again, and it is left out.
      await legacy.close();
      const whileDown = await client.responses.create({ model: 'm', input: 'add' });
      assertValidResponseWithMcpItems(whileDown);
      await waitFor(async () => (await mcpState()).state === 'unavailable', 8_000);
    } finally {
      await legacy.close();
    }
  });

  it('an MCP call that will not run (tool_choice none, its server down) still shows as its mcp_call, saying why, never dropped in silence', async () => {
    upstream.setScript(modelCalling('healthy__add', { a: 1, b: 2 }));
    const { client } = await start({ servers: [{ name: 'healthy', url: healthyUrl }] });
    const before = upstream.requests.length;
    const refused = await client.responses.create({ model: 'm', input: 'go', tool_choice: 'none' });
    assertValidResponseWithMcpItems(refused);
    expect(refused.status).toBe('completed');
    expect(refused.output.filter((item: any) => item.type === 'mcp_call')).toEqual([expect.objectContaining({ name: 'add', server_label: 'healthy', error: expect.stringContaining('tool_choice is "none"') })]);
    expect(upstream.requests.length - before).toBe(1);
    expect(healthy.calls.filter((call) => call.name === 'add' && (call.args as { a: number }).a === 1)).toEqual([]);
  });

  it("two request-named servers under one label are a 400 naming the second; an mcp_call resent in OpenAI's newer shape (failed, an error object) is read", async () => {
    upstream.setScript(textReply('fine'));
    const { client, gateway } = await start({ allowedUrls: [`${new URL(healthyUrl).origin}/`] });
    const twice = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'x', tools: [{ type: 'mcp', server_label: 'dup', server_url: healthyUrl, require_approval: 'never' }, { type: 'mcp', server_label: 'dup', server_url: healthyUrl, require_approval: 'never' }] }),
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as any).error).toMatchObject({ param: 'tools[1].server_label', code: 'duplicate_mcp_server_label' });

    const before = upstream.requests.length;
    await client.responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'fetch it' },
        { type: 'mcp_call', id: 'mcp_1', server_label: 'web', name: 'fetch', arguments: '{}', status: 'failed', error: { type: 'http_error', code: 502, message: 'Bad gateway' } } as any,
        { role: 'user', content: 'and now?' },
      ],
    });
    expect(JSON.stringify(upstream.requests[before]!.body.messages)).toContain('Bad gateway (HTTP 502)');
  });

  it("tools whose names models refuse (files.read: MCP names may hold dots) are offered under safe names and run by their own", async () => {
    healthy.extraTools.push((mcp) => mcp.registerTool('files.read', { description: 'Reads a file.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'file body' }] })));
    const offeredAs = qualifiedToolName('healthy', 'files.read');
    expect(offeredAs).toMatch(/^healthy__files_read_[0-9a-f]{8}$/);
    upstream.setScript(modelCalling(offeredAs, {}));
    const { client } = await start({ servers: [{ name: 'healthy', url: healthyUrl }] });
    const before = upstream.requests.length;
    const response = await client.responses.create({ model: 'm', input: 'read it' });
    assertValidResponseWithMcpItems(response);
    expect((upstream.requests[before]!.body.tools as any[]).map((tool) => tool.function.name)).toContain(offeredAs);
    expect(response.output.find((item: any) => item.type === 'mcp_call')).toMatchObject({ name: 'files.read', server_label: 'healthy', output: 'file body' });
    expect(response.output_text).toBe('saw: file body');
  });

  it('a request-named server that never answers is listed within connectTimeoutMs and fails into its mcp_list_tools item', async () => {
    upstream.setScript(textReply('answered without it'));
    const { client } = await start({ allowedUrls: [`${new URL(blackHoleUrl).origin}/`], connectTimeoutMs: 800 });
    const started = performance.now();
    const response = await client.responses.create({
      model: 'm',
      input: 'hi',
      tools: [{ type: 'mcp', server_label: 'void', server_url: blackHoleUrl, require_approval: 'never' }],
    });
    const elapsed = performance.now() - started;
    expect(response.output[0]).toMatchObject({ type: 'mcp_list_tools', server_label: 'void', tools: [], error: expect.stringMatching(/800 ms/) });
    expect(response.output_text).toBe('answered without it');
    expect(elapsed).toBeGreaterThanOrEqual(750);
    expect(elapsed).toBeLessThan(3_000);
  });

  it('a request-named server that refuses the credentials says its HTTP status in mcp_list_tools.error, as an operator server does', async () => {
    const unauthorized = createHttpServer((_req, res) => res.writeHead(401).end());
    await new Promise<void>((resolve) => unauthorized.listen(0, '127.0.0.1', resolve));
    try {
      const serverUrl = `http://127.0.0.1:${(unauthorized.address() as AddressInfo).port}/mcp`;
      upstream.setScript(textReply('answered without it'));
      const { client } = await start({ allowedUrls: [`${new URL(serverUrl).origin}/`] });
      const response = await client.responses.create({ model: 'm', input: 'hi', tools: [{ type: 'mcp', server_label: 'locked', server_url: serverUrl, require_approval: 'never' }] });
      assertValidResponseWithMcpItems(response);
      expect(response.output[0]).toMatchObject({ type: 'mcp_list_tools', server_label: 'locked', tools: [], error: expect.stringContaining("Could not list the tools of 'locked': HTTP 401 Unauthorized") });
    } finally {
      unauthorized.close();
    }
  });

  it('timeout precedence: mcp.timeoutMs beyond loop.toolTimeoutMs is honoured for a server that sets none', async () => {
    upstream.setScript(modelCalling('healthy__slow', { ms: 900, label: 'finished' }));
    const { client } = await start({ servers: [{ name: 'healthy', url: healthyUrl }], timeoutMs: 5_000 }, { loop: { toolTimeoutMs: 300 } });
    const response = await client.responses.create({ model: 'm', input: 'go' });
    expect(callResult(response)).toBe('slept 900 ms (finished)');
  });

  it('timeout precedence: a server\'s timeoutMs beyond loop.toolTimeoutMs is honoured', async () => {
    upstream.setScript(modelCalling('healthy__slow', { ms: 900, label: 'finished' }));
    const { client } = await start({ servers: [{ name: 'healthy', url: healthyUrl, timeoutMs: 5_000 }] }, { loop: { toolTimeoutMs: 300 } });
    const response = await client.responses.create({ model: 'm', input: 'go' });
    expect(callResult(response)).not.toMatch(/did not finish/);
    expect(response.output_text).toMatch(/^saw: /);
  });
});
