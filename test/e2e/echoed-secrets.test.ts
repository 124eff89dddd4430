import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { chunk, ScriptedChatUpstream, sse, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';
import { startStatelessMcpServer } from '../support/stateless-mcp-server.ts';

const UPSTREAM_KEY = 'sk-echoed-upstream-key-71c2';
const OPERATOR_MCP_KEY = 'echoed-operator-mcp-key-5d0a';
const REFUSED_MCP_TOKEN = 'echoed-refused-mcp-token-9e44';
const REQUEST_MCP_TOKEN = 'echoed-request-mcp-token-2b7f';
const SECRETS = [UPSTREAM_KEY, OPERATOR_MCP_KEY, REFUSED_MCP_TOKEN, REQUEST_MCP_TOKEN];

/** A real MCP server whose one tool answers with the credential it was sent. */
function startEchoingMcpServer(): Promise<{ url: string; server: Server }> {
  return startStatelessMcpServer(() => {
    const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says which key it was called with.', inputSchema: {} }, async (_args, extra) => ({
      content: [{ type: 'text', text: `called with ${String(extra.requestInfo?.headers['x-api-key'])}` }],
    }));
    return mcp;
  });
}

/** An MCP endpoint that refuses every request, quoting the authorization it got (as careless servers do). */
async function startRefusingServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `invalid token: ${req.headers.authorization}` })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

const echo = (status: number) => (request: RecordedRequest) => ({ kind: 'json' as const, status, body: { error: { message: `bad key ${request.headers.authorization}` } } });
/** A model that calls the echoing MCP tool, then answers as `then` says (streamed or not, as asked). */
const callsWhoami =
  (then: (request: RecordedRequest) => UpstreamReply) =>
  (request: RecordedRequest): UpstreamReply => {
    if ((request.body.messages as { role: string }[]).some((message) => message.role === 'tool')) return then(request);
    const call = { id: 'call_w', type: 'function', function: { name: 'echo__whoami', arguments: '{}' } };
    if (request.body.stream) return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }), chunk({}, 'tool_calls')]) };
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] } };
  };

/**
 * Upstreams and MCP servers may quote the credential they were sent (an
 * error body, a stream's error frame, a tool result). The gateway passes
 * their messages on, so it must blank the credentials out first: nothing a
 * client, the store or the log receives may carry them.
 */
describe('credentials echoed by upstreams and MCP servers', () => {
  const upstream = new ScriptedChatUpstream();
  const logs: string[] = [];
  const written: string[] = [];
  let gateway: RunningGateway;
  let echoing: Awaited<ReturnType<typeof startEchoingMcpServer>>;
  let refusing: Awaited<ReturnType<typeof startRefusingServer>>;

  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    written.push(JSON.stringify([...response.headers]), text);
    return { status: response.status, text };
  };
  const stored = async (id: string) => {
    const text = await (await fetch(`${gateway.baseURL}/responses/${id}`)).text();
    written.push(text);
    return JSON.parse(text) as Record<string, any>;
  };

  beforeAll(async () => {
    [echoing, refusing] = await Promise.all([startEchoingMcpServer(), startRefusingServer()]);
    gateway = await startGateway(
      await upstream.start(),
      {
        logLevel: 'debug',
        mcp: {
          servers: [
            { name: 'echo', url: echoing.url, headers: { 'x-api-key': OPERATOR_MCP_KEY } },
            { name: 'refused', url: refusing.url, headers: { authorization: `Bearer ${REFUSED_MCP_TOKEN}` } },
          ],
          allowedUrls: [`${new URL(refusing.url).origin}/`],
          listWaitMs: 5_000,
          retryBaseMs: 60_000,
        },
      },
      { apiKey: UPSTREAM_KEY },
      [],
      { write: (line) => logs.push(line) },
    );
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    echoing.server.close();
    refusing.server.close();
  });

  it('an upstream quoting its key in an error: the client gets the message without the key, streamed or not', async () => {
    upstream.setScript(echo(400));
    const refused = await post({ model: 'm', input: 'x' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error.message).toBe('bad key Bearer [redacted]');
    upstream.setScript(echo(500));
    expect(JSON.parse((await post({ model: 'm', input: 'x', stream: true })).text).error.message).toContain('[redacted]');
  });

  it('failing mid-response: the failed response, as sent and as stored, carries no key', async () => {
    upstream.setScript(callsWhoami(echo(500)));
    const json = JSON.parse((await post({ model: 'm', input: 'x' })).text);
    expect(json.status).toBe('failed');
    expect(json.error.message).toContain('[redacted]');
    expect((await stored(json.id)).error.message).toBe(json.error.message);

    upstream.setScript(callsWhoami((request) => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), { error: { message: `quota for ${request.headers.authorization}`, code: 'server_error' } }]) })));
    const streamed = await post({ model: 'm', input: 'x', stream: true });
    expect(streamed.text).toContain('response.failed');
    expect(streamed.text).toContain('quota for Bearer [redacted]');
  });

  it("an upstream quoting its key in its error's code or param: blanked there too, as answered, streamed and stored", async () => {
    upstream.setScript((request) => ({ kind: 'json', status: 400, body: { error: { message: 'refused', code: `bad_${request.headers.authorization}`, param: `key:${request.headers.authorization}` } } }));
    const refused = JSON.parse((await post({ model: 'm', input: 'x' })).text);
    expect(refused.error).toMatchObject({ code: 'bad_Bearer [redacted]', param: 'key:Bearer [redacted]' });

    upstream.setScript(callsWhoami((request) => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), { error: { message: 'stopped', code: `key_${request.headers.authorization}` } }]) })));
    const streamed = await post({ model: 'm', input: 'x', stream: true });
    const failed = streamed.text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6))).find((event) => event.type === 'response.failed');
    expect(failed.response.error.code).toBe('key_Bearer [redacted]');
    expect((await stored(failed.response.id)).error.code).toBe('key_Bearer [redacted]');
  });

  it("an MCP server's tool result quoting its key reaches neither the model nor the client", async () => {
    upstream.setScript(callsWhoami(() => ({ kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] } })));
    const response = JSON.parse((await post({ model: 'm', input: 'x' })).text);
    expect(response.status).toBe('completed');
    const toolMessage = (upstream.requests.at(-1)!.body.messages as { role: string; content: string }[]).find((message) => message.role === 'tool');
    expect(toolMessage?.content).toBe('called with [redacted]');
    await stored(response.id);
  });

  it('MCP servers refusing with their token quoted: the listing error, readiness and the warn line carry no token', async () => {
    upstream.setScript(() => ({ kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] } }));
    const response = JSON.parse(
      (await post({ model: 'm', input: 'x', tools: [{ type: 'mcp', server_label: 'named', server_url: refusing.url, headers: { authorization: `Bearer ${REQUEST_MCP_TOKEN}` }, require_approval: 'never' }] })).text,
    );
    const listing = response.output.find((item: { type: string }) => item.type === 'mcp_list_tools');
    expect(listing.error).toContain('invalid token: [redacted]');
    await stored(response.id);

    let readiness = '';
    await waitFor(async () => {
      readiness = await (await fetch(`${gateway.origin}/readyz`)).text();
      return readiness.includes('unavailable');
    });
    written.push(readiness);
    expect(logs.some((line) => line.includes('refused') && line.includes('invalid token'))).toBe(true);
  });

  it('nothing the gateway wrote — bodies, headers, stored responses, readiness, every log line — carries a credential', () => {
    expect(logs.length).toBeGreaterThan(10);
    const everything = [...written, ...logs].join('\n');
    for (const secret of SECRETS) expect(everything.includes(secret), `${secret} was written`).toBe(false);
  });
});
