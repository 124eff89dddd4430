import OpenAI from 'openai';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { startRedisServer } from '../support/redis.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** Secrets the operator and clients hand the gateway; none may come back out, anywhere. */
const CANARY = {
  openai: 'sk-canary-openai-5b1f0c',
  anthropic: 'sk-ant-canary-9d2e7a',
  client: 'sk-canary-client-key-3c8f',
  mcpOperator: 'canary-mcp-operator-header-77ad',
  mcpRequest: 'canary-mcp-request-header-41bc',
  redis: 'canary-redis-password-e05f',
  /** Configured nowhere: a key a client sends in the query, which the logs' own redaction cannot know. */
  query: 'AIzaCanaryQueryKey8841',
};

function callsTool(name: string, args: Record<string, unknown>): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool');
    if (results.length > 0) return textCompletion(`done: ${results.map((message) => message.content).join(',')}`);
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, finish_reason: 'tool_calls' }] } };
  };
}

/**
 * The real process (what `npm start` runs) with a canary in every secret it
 * takes, driven through successes and failures; then everything it wrote —
 * stdout, stderr, response bodies and headers, stored responses, Redis — is
 * searched for the canaries.
 */
describe('secrets never leak', () => {
  const openai = new ScriptedChatUpstream(() => textCompletion('hello'));
  const anthropic = new ScriptedChatUpstream(() => ({ kind: 'json', status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${CANARY.anthropic.slice(0, 6)}…` } } }));
  const operatorMcp = new McpTestServer();
  const requestMcp = new McpTestServer();
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let gateway: GatewayProcess;
  const seen: string[] = [];
  const prefix = 'loopgate-canary:';

  beforeAll(async () => {
    const [openaiUrl, anthropicUrl, operatorUrl, requestUrl] = await Promise.all([openai.start(), anthropic.start(), operatorMcp.start(), requestMcp.start()]);
    redis = await startRedisServer(undefined, CANARY.redis);
    gateway = await startGatewayProcess({
      OPENAI_BASE_URL: openaiUrl,
      OPENAI_API_KEY: CANARY.openai,
      ANTHROPIC_BASE_URL: new URL(anthropicUrl).origin,
      ANTHROPIC_API_KEY: CANARY.anthropic,
      API_KEYS: JSON.stringify({ [CANARY.client]: 'team' }),
      MCP_SERVERS: JSON.stringify([{ name: 'ops', url: operatorUrl, headers: { 'x-api-key': CANARY.mcpOperator } }]),
      MCP_ALLOWED_URLS: `${new URL(requestUrl).origin}/`,
      REDIS_URL: `redis://:${CANARY.redis}@127.0.0.1:${redis.port}`,
      REDIS_KEY_PREFIX: prefix,
      LOG_LEVEL: 'debug',
    });
    (globalThis as { requestMcpUrl?: string }).requestMcpUrl = requestUrl;
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([openai.close(), anthropic.close(), operatorMcp.close(), requestMcp.close()]);
    await redis?.stop();
  });

  it('through successes, failures and disconnects, no canary is written anywhere', async () => {
    const requestMcpUrl = (globalThis as { requestMcpUrl?: string }).requestMcpUrl!;
    const record = async (response: Response) => {
      seen.push(JSON.stringify([...response.headers]), await response.text());
    };
    const post = (body: unknown, key = CANARY.client) =>
      fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: CANARY.client, maxRetries: 0 });
    const ids: string[] = [];

    // A plain answer, then a continuation of it.
    const first = await client.responses.create({ model: 'm', input: 'hi' });
    ids.push(first.id);
    ids.push((await client.responses.create({ model: 'm', input: 'again', previous_response_id: first.id })).id);
    // The operator's MCP tool (its header goes to that server only).
    openai.setScript(callsTool('ops__add', { a: 1, b: 2 }));
    ids.push((await client.responses.create({ model: 'm', input: 'add' })).id);
    expect(operatorMcp.headers.some((headers) => headers['x-api-key'] === CANARY.mcpOperator)).toBe(true);
    // A server the request names, with its own credential.
    openai.setScript(callsTool('calc__add', { a: 2, b: 2 }));
    const named = await post({ model: 'm', input: 'add', tools: [{ type: 'mcp', server_label: 'calc', server_url: requestMcpUrl, headers: { authorization: `Bearer ${CANARY.mcpRequest}` }, require_approval: 'never' }] });
    expect(named.status).toBe(200);
    const namedBody = await named.text();
    seen.push(namedBody);
    ids.push(JSON.parse(namedBody).id);
    // Refusals and failures: a bad request, a wrong client key, an upstream 500, the upstream refusing the gateway's key, Anthropic refusing its key.
    await record(await post({ model: 'm', input: 'x', temperature: 'hot' }));
    await record(await post({ model: 'm', input: 'x' }, 'sk-wrong-key'));
    // A client that puts its key in the query, Google's way: refused (no key is read there), and its line does not carry it.
    await record(await fetch(`${gateway.baseURL}/models?key=${CANARY.query}`));
    await record(await fetch(`${gateway.baseURL}/nowhere?api_key=${CANARY.query}&limit=2`, { headers: { authorization: `Bearer ${CANARY.client}` } }));
    await record(await fetch(`${gateway.baseURL}/models?access_token=${CANARY.query}`, { headers: { authorization: `Bearer ${CANARY.client}` } }));
    openai.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'upstream broke' } } }));
    await record(await post({ model: 'm', input: 'x' }));
    openai.setScript(() => ({ kind: 'json', status: 401, body: { error: { message: `Incorrect API key provided: ${CANARY.openai}`, code: 'invalid_api_key' } } }));
    await record(await post({ model: 'm', input: 'x' }));
    await record(await post({ model: 'm', input: 'x', stream: true }));
    await record(await post({ model: 'claude-sonnet-test', input: 'x' }));
    // Upstreams quoting the credential they were sent, in a refusal the client sees and in a failure mid-response (stored).
    anthropic.setScript((request) => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `bad request for key ${String(request.headers['x-api-key'])}` } } }));
    await record(await post({ model: 'claude-sonnet-test', input: 'x' }));
    openai.setScript((request) => ({ kind: 'json', status: 400, body: { error: { message: `no such thing for ${String(request.headers.authorization)}` } } }));
    await record(await post({ model: 'm', input: 'x' }));
    const toolThenEcho = callsTool('ops__add', { a: 1, b: 1 });
    openai.setScript((request) =>
      (request.body.messages as any[]).some((message) => message.role === 'tool')
        ? { kind: 'json', status: 500, body: { error: { message: `overloaded, key ${String(request.headers.authorization)}` } } }
        : toolThenEcho(request),
    );
    const failedMidway = await post({ model: 'm', input: 'add' });
    const failedBody = await failedMidway.text();
    seen.push(failedBody);
    expect(JSON.parse(failedBody).status).toBe('failed');
    ids.push(JSON.parse(failedBody).id);
    // A client that leaves mid-stream.
    openai.setScript(() => ({ kind: 'sse', pauseMs: 50, pieces: sse([chunk({ role: 'assistant', content: '' }), ...'slowly'.split('').map((char) => chunk({ content: char })), chunk({}, 'stop')]) }));
    const leaving = await post({ model: 'm', input: 'x', stream: true });
    const reader = leaving.body!.getReader();
    await reader.read();
    await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Everything stored, fetched back as a client would.
    for (const id of ids) {
      const stored = await fetch(`${gateway.baseURL}/responses/${id}`, { headers: { authorization: `Bearer ${CANARY.client}` } });
      expect(stored.status).toBe(200);
      await record(stored);
      await record(await fetch(`${gateway.baseURL}/responses/${id}/input_items`, { headers: { authorization: `Bearer ${CANARY.client}` } }));
    }
    // Everything in Redis under the gateway's prefix.
    const direct = new Redis(`redis://:${CANARY.redis}@127.0.0.1:${redis.port}`);
    try {
      const keys = await direct.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) seen.push(key, JSON.stringify(await readAny(direct, key)));
    } finally {
      direct.disconnect();
    }
    // The operator's view: the misconfiguration was logged, with the base URL and without the key.
    expect(gateway.logs.some((line) => line.code === 'upstream_auth_failed' && line.level === 50 && line.provider === 'openai')).toBe(true);
    expect(gateway.logs.some((line) => line.code === 'upstream_auth_failed' && line.level === 50 && line.provider === 'anthropic')).toBe(true);

    seen.push(JSON.stringify(gateway.logs), gateway.stderr());
    expect(gateway.notJson).toEqual([]);
    const everything = seen.join('\n');
    for (const [name, secret] of Object.entries(CANARY)) expect(everything.includes(secret), `the ${name} secret leaked`).toBe(false);
  });
});

/** A key's value whatever its type (responses are hashes and strings; usage adds sets, rate limits sorted sets). */
async function readAny(client: Redis, key: string): Promise<unknown> {
  switch (await client.type(key)) {
    case 'hash':
      return client.hgetall(key);
    case 'set':
      return client.smembers(key);
    case 'zset':
      return client.zrange(key, '0', '-1', 'WITHSCORES');
    case 'stream':
      return client.xrange(key, '-', '+');
    default:
      return client.get(key);
  }
}
