import OpenAI from 'openai';
import { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidExtension, assertValidWebSocketError } from '../support/openresponses-schema.ts';
import { flavors, scriptModel } from '../support/provider-flavors.ts';
import { chunk, ScriptedChatUpstream, sse, textReply, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { finalOf, SocketClient } from '../support/socket-client.ts';
import { waitFor } from '../support/wait-for.ts';

const socketUrl = (gateway: RunningGateway) => `${gateway.origin.replace('http:', 'ws:')}/v1/responses`;

/** A bare upgrade's outcome for these headers: 101 when it switched protocols, else the refusal's status and body. */
function upgrade(target: RunningGateway, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(socketUrl(target), { headers });
    socket.on('open', () => {
      socket.close();
      resolve({ status: 101, body: '' });
    });
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (piece: Buffer) => (body += piece));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
  });
}

/** A streamed answer whose pieces come `pauseMs` apart (time to act while it runs). */
function slowText(text: string, pauseMs: number): UpstreamReply {
  return { kind: 'sse', pauseMs, pieces: sse([chunk({ role: 'assistant', content: '' }), ...[...text].map((char) => chunk({ content: char })), chunk({}, 'stop'), usageChunk(5, text.length)]) };
}

function expectErrorFrame(frame: Record<string, any>, status: number, code: string, param?: string | null): void {
  assertValidWebSocketError(frame);
  expect(frame).toMatchObject({ type: 'error', status, error: { code } });
  expect(typeof frame.error.message).toBe('string');
  if (param !== undefined) expect(frame.error.param).toBe(param);
}

describe.each(flavors)('WebSocket transport through the SDK ResponsesWS, $name upstream', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const executor = new MockExecutor(['lookup'], async (call) => ({ output: `found ${JSON.parse(call.arguments).q}`, isError: false }));
  let gateway: RunningGateway;
  let client: OpenAI;
  const sockets: SocketClient[] = [];
  const open = () => {
    const socket = new SocketClient(client);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url), {}, [executor]);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close();
    upstream.requests.length = 0;
    executor.calls.length = 0;
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('sequential responses on one socket: each a schema-valid event stream numbered from 0, with no [DONE]', async () => {
    scriptModel(upstream, flavor, (request) => ({ text: `answer ${upstream.requests.indexOf(request) + 1}` }));
    const socket = open();
    const first = await socket.create({ model: flavor.model, input: 'one', store: false });
    const second = await socket.create({ model: flavor.model, input: 'two', store: false });
    for (const [turn, text] of [[first, 'answer 1'], [second, 'answer 2']] as const) {
      const final = assertEventStreamInvariants(turn as never);
      expect(final.status).toBe('completed');
      expect(final.output.at(-1).content[0].text).toBe(text);
    }
    expect(socket.frames.every((frame) => typeof frame === 'object' && frame.type !== '[DONE]')).toBe(true);
    expect(upstream.requests).toHaveLength(2);
  });

  it('continues a store:false response on the same socket from connection memory, and nowhere else', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'ok' }));
    const socket = open();
    const first = finalOf(await socket.create({ model: flavor.model, input: 'remember 42', store: false, instructions: 'be brief' }));
    const second = finalOf(await socket.create({ model: flavor.model, input: 'what number?', store: false, previous_response_id: first.id }));
    expect(second.status).toBe('completed');
    expect(second.previous_response_id).toBe(first.id);
    const seen = flavor.seen(upstream.requests[1]!);
    expect(seen.filter((entry) => entry.kind !== 'system')).toEqual([
      { kind: 'user', text: 'remember 42' },
      { kind: 'assistant', text: 'ok' },
      { kind: 'user', text: 'what number?' },
    ]);
    // A third turn continues the second: the chain is kept whole, not just one step.
    const third = finalOf(await socket.create({ model: flavor.model, input: 'and again?', store: false, previous_response_id: second.id }));
    expect(flavor.seen(upstream.requests[2]!).filter((entry) => entry.kind === 'user').map((entry) => (entry as { text: string }).text)).toEqual(['remember 42', 'what number?', 'and again?']);

    // Not stored: another socket, and HTTP, cannot continue it.
    const other = open();
    const [refused] = await other.create({ model: flavor.model, input: 'x', store: false, previous_response_id: second.id });
    expectErrorFrame(refused!, 404, 'previous_response_not_found', 'previous_response_id');
    await expect(client.responses.create({ model: flavor.model, input: 'x', previous_response_id: second.id })).rejects.toMatchObject({ status: 404, code: 'previous_response_not_found' });

    // A stored turn continuing them is kept, but continued elsewhere the 404 says why its chain breaks.
    const stored = finalOf(await socket.create({ model: flavor.model, input: 'keep this one', store: true, previous_response_id: third.id }));
    await expect(client.responses.create({ model: flavor.model, input: 'x', previous_response_id: stored.id })).rejects.toMatchObject({ status: 404, message: expect.stringContaining('created with store: false') });
  });

  it('runs the agentic loop with a server-side tool over the socket', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_1', name: 'lookup', args: { q: 'gateways' } }] } : { text: `Result: ${results[0]}` }));
    const socket = open();
    const turn = await socket.create({ model: flavor.model, input: 'look it up', store: false, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] });
    const final = assertEventStreamInvariants(turn as never);
    expect(final.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(final.output.at(-1).content[0].text).toBe('Result: found gateways');
    expect(executor.calls.map((call) => call.name)).toEqual(['lookup']);
  });

  it('a client tool pauses the response; its output continues it on the socket (store:false)', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_ask', name: 'ask_user', args: { question: 'which?' } }] } : { text: `User said ${results[0]}` }));
    const socket = open();
    const tools = [{ type: 'function', name: 'ask_user', parameters: { type: 'object', properties: { question: { type: 'string' } } } }];
    const paused = finalOf(await socket.create({ model: flavor.model, input: 'ask', store: false, tools }));
    expect(paused.status).toBe('requires_action');
    const call = paused.output.find((item: any) => item.type === 'function_call');
    const resumed = await socket.create({ model: flavor.model, store: false, tools, previous_response_id: paused.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'the blue one' }] });
    const final = assertEventStreamInvariants(resumed as never);
    expect(final.status).toBe('completed');
    expect(final.output.at(-1).content[0].text).toBe('User said the blue one');
  });

  it('an upstream failure ends the turn with an error frame and evicts the response it continued', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'first' }));
    const socket = open();
    const first = finalOf(await socket.create({ model: flavor.model, input: 'hi', store: false }));
    const failing = flavor.failAtOnce();
    upstream.setScript(() => failing.reply);
    const [failed] = await socket.create({ model: flavor.model, input: 'again', store: false, previous_response_id: first.id });
    expectErrorFrame(failed!, failing.status, failed!.error.code);
    scriptModel(upstream, flavor, () => ({ text: 'recovered' }));
    const [evicted] = await socket.create({ model: flavor.model, input: 'again', store: false, previous_response_id: first.id });
    expectErrorFrame(evicted!, 404, 'previous_response_not_found', 'previous_response_id');
    // The socket itself is fine: a fresh turn works.
    expect(finalOf(await socket.create({ model: flavor.model, input: 'fresh', store: false })).status).toBe('completed');
  });

  it('an event refused for its type (response.steer naming a response) is no failed continuation: the response it names stays continuable', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'kept' }));
    const socket = open();
    const first = finalOf(await socket.create({ model: flavor.model, input: 'hi', store: false }));
    socket.ws.send({ type: 'response.steer', previous_response_id: first.id, input: 'steer it' } as never);
    expectErrorFrame((await socket.nextTurn())[0]!, 400, 'unsupported_event_type', 'type');
    // As OpenAI's types suggest after a refused steer: the input goes into a continuation instead.
    const continued = finalOf(await socket.create({ model: flavor.model, input: 'steer it', store: false, previous_response_id: first.id }));
    expect(continued.status).toBe('completed');
  });
});

describe('WebSocket transport: connection rules', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  let upstreamUrl: string;
  let gateway: RunningGateway;
  let client: OpenAI;
  const sockets: SocketClient[] = [];
  const open = () => {
    const socket = new SocketClient(client);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, { server: { bodyLimitBytes: 64 * 1024 } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close();
    upstream.requests.length = 0;
    upstream.setScript(textReply('Hello'));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it("an upgrade from a browser page of an origin server.corsOrigins does not allow is refused with 403 (browsers apply no CORS to WebSockets); the gateway's own origin and clients that send no Origin connect", async () => {
    // The default without API keys, as for CORS: pages on this machine only (any origin once keys are configured: a page must hold one).
    expect((await upgrade(gateway, { origin: 'https://any.example' })).status).toBe(403);
    expect((await upgrade(gateway, { origin: 'http://localhost:5173' })).status).toBe(101);
    for (const corsOrigins of [['https://app.example'], []]) {
      const strict = await startGateway(upstreamUrl, { server: { corsOrigins } });
      try {
        const refused = await upgrade(strict, { origin: 'https://evil.example' });
        expect(refused.status).toBe(403);
        expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'origin_not_allowed', type: 'invalid_request_error' } });
        expect((await upgrade(strict, { origin: 'https://app.example' })).status).toBe(corsOrigins.length > 0 ? 101 : 403);
        expect((await upgrade(strict, { origin: strict.origin })).status).toBe(101);
        expect((await upgrade(strict, {})).status).toBe(101);
      } finally {
        await strict.close();
      }
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('a response.create sent while one runs waits for it: the two event streams never interleave', async () => {
    upstream.setScript(() => slowText('slow answer', 20));
    const socket = open();
    socket.send({ model: 'm', input: 'first', store: false });
    socket.send({ model: 'm', input: 'second', store: false });
    const first = await socket.nextTurn();
    const second = await socket.nextTurn();
    const a = assertEventStreamInvariants(first as never);
    const b = assertEventStreamInvariants(second as never);
    expect(a.id).not.toBe(b.id);
    expect(upstream.requests.map((request) => request.body.messages.at(-1).content)).toEqual(['first', 'second']);
    // The second upstream call started only after the first response ended.
    expect(socket.frames.findIndex((frame) => frame.type === 'response.created' && frame.response.id === b.id)).toBeGreaterThan(socket.frames.findIndex((frame) => frame.type === 'response.completed' && frame.response.id === a.id));
  });

  it('continues a stored response created over HTTP (hydrated from the store)', async () => {
    const stored = await client.responses.create({ model: 'm', input: 'stored question' });
    const socket = open();
    const final = finalOf(await socket.create({ model: 'm', input: 'follow-up', previous_response_id: stored.id }));
    expect(final.status).toBe('completed');
    expect(upstream.requests.at(-1)!.body.messages.map((message: any) => message.content)).toEqual(['stored question', 'Hello', 'follow-up']);
    // Stored by default, so HTTP continues what the socket created.
    const next = await client.responses.create({ model: 'm', input: 'over http', previous_response_id: final.id });
    expect(next.status).toBe('completed');
  });

  it('refuses the HTTP transport fields (unless they say what the socket does anyway) and other event types, each as a schema-valid error frame; the socket stays usable', async () => {
    const socket = open();
    for (const [field, value] of [['stream', false], ['stream_options', { include_obfuscation: false }], ['background', true]] as const) {
      const [frame] = await socket.create({ model: 'm', input: 'x', [field]: value });
      expectErrorFrame(frame!, 400, 'unsupported_parameter', field);
    }
    socket.ws.send({ type: 'response.steer', previous_response_id: 'resp_x', input: 'hi' } as never);
    expectErrorFrame((await socket.nextTurn())[0]!, 400, 'unsupported_event_type', 'type');
    socket.ws.sendRaw('not json');
    expectErrorFrame((await socket.nextTurn())[0]!, 400, 'invalid_json');
    const [unknown] = await socket.create({ model: 'm', input: 'x', surprise: 1 });
    expectErrorFrame(unknown!, 400, 'unknown_parameter', 'surprise');
    expect(upstream.requests).toHaveLength(0);
    expect(finalOf(await socket.create({ model: 'm', input: 'fine' })).status).toBe('completed');
    // Values that say what the socket does anyway are not refused (the Agents SDK sends stream: true on every frame).
    expect(finalOf(await socket.create({ model: 'm', input: 'fine', stream: true, background: false, stream_options: null })).status).toBe('completed');
  });

  it('an upstream refusal without a code (OpenAI sends code: null) is still a schema-valid error frame: its code is the error\'s type', async () => {
    upstream.setScript(() => ({ kind: 'json', status: 400, body: { error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: null } } }));
    const socket = open();
    const [frame] = await socket.create({ model: 'm', input: 'x' });
    expectErrorFrame(frame!, 400, 'invalid_request_error', 'temperature');
  });

  it('hosted tools the model cannot be offered are said in the response (no headers on a socket)', async () => {
    const socket = open();
    const turn = await socket.create({ model: 'm', input: 'x', store: false, tools: [{ type: 'web_search' }] });
    const final = assertEventStreamInvariants(turn as never);
    expect(final['loopgate:omitted_tools']).toEqual(['web_search']);
    assertValidExtension('ResponseResourceExtensions', final);
    expect(turn[0]!.response['loopgate:omitted_tools']).toEqual(['web_search']);
  });

  it('after a standalone compaction, a new response on the socket starts from the compacted window (no previous_response_id)', async () => {
    upstream.setScript(textReply('We talked about the number 42.'));
    const socket = open();
    const first = finalOf(await socket.create({ model: 'm', input: 'remember 42', store: false }));
    const compacted = await client.responses.compact({ model: 'm', input: [{ role: 'user', content: 'remember 42' }, { role: 'assistant', content: first.output.at(-1).content[0].text }] as never });
    expect(compacted.output.at(-1)!.type).toBe('compaction');
    upstream.setScript(textReply('42'));
    const next = finalOf(await socket.create({ model: 'm', store: false, previous_response_id: null, input: [...compacted.output, { role: 'user', content: 'which number?' }] }));
    expect(next.status).toBe('completed');
    const seen = upstream.requests.at(-1)!.body.messages.map((message: any) => (typeof message.content === 'string' ? message.content : message.content.map((part: any) => part.text).join('')));
    expect(seen[0]).toBe('remember 42');
    expect(seen[1]).toContain('We talked about the number 42.');
    expect(seen.at(-1)).toBe('which number?');
    expect(JSON.stringify(seen)).not.toContain((compacted.output.at(-1) as { encrypted_content: string }).encrypted_content);
  });

  it('echoes stream_id on every frame of the response it names', async () => {
    const socket = open();
    const turn = await socket.create({ model: 'm', input: 'x', store: false, stream_id: 'lane-a' });
    expect(turn.every((frame) => frame.stream_id === 'lane-a')).toBe(true);
  });

  it('closing the socket cancels the running response and its upstream call; the stored response says cancelled', async () => {
    upstream.setScript(() => slowText('a long answer that takes a while', 100));
    const socket = open();
    socket.send({ model: 'm', input: 'x' });
    await waitFor(() => socket.frames.some((frame) => frame.type === 'response.output_text.delta'));
    const id = socket.frames[0]!.response.id;
    const abortedBefore = upstream.abortedRequests;
    socket.close();
    await waitFor(() => upstream.abortedRequests > abortedBefore);
    await waitFor(async () => (await client.responses.retrieve(id).catch(() => null))?.status === 'cancelled');
  });

  it('respects backpressure: a socket that stops reading stops the upstream too', async () => {
    // ~24 MB of deltas: several times what the socket buffers along the way hold.
    const total = 6_000;
    const delta = 'x'.repeat(4_000);
    let written = 0;
    const original = ServerResponse.prototype.write;
    const spy = vi.spyOn(ServerResponse.prototype, 'write').mockImplementation(function (this: ServerResponse, data: any, ...rest: any[]) {
      if ((this as any).req?.url === '/v1/chat/completions') written++;
      return (original as any).call(this, data, ...rest);
    });
    try {
      upstream.setScript(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: total }, () => chunk({ content: delta })), chunk({}, 'stop')]) }));
      const socket = new WebSocket(socketUrl(gateway), { perMessageDeflate: false });
      await new Promise((resolve) => socket.once('open', resolve));
      let deltas = 0;
      const completed = new Promise<void>((resolve) =>
        socket.on('message', (data) => {
          const event = JSON.parse(String(data));
          if (event.type === 'response.output_text.delta') deltas++;
          if (event.type === 'response.completed') resolve();
        }),
      );
      socket.pause();
      socket.send(JSON.stringify({ type: 'response.create', model: 'm', input: 'hi', store: false }));
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(written, 'the gateway stopped pulling from the upstream').toBeLessThan(total * 0.6);
      socket.resume();
      await completed;
      expect(deltas).toBe(total);
      expect(written).toBeGreaterThanOrEqual(total);
      socket.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('a frame above the body limit closes the connection with 1009', async () => {
    const socket = open();
    socket.send({ model: 'm', input: 'x'.repeat(100 * 1024) });
    expect((await socket.closed).code).toBe(1009);
    expect(upstream.requests).toHaveLength(0);
  });

  it('more frames than may wait: each waiting one and the refused one get websocket_queue_full under their own stream_id, then the close', async () => {
    const small = await startGateway(upstreamUrl, { server: { websocketMaxQueued: 2 } });
    try {
      upstream.setScript(() => slowText('busy for a while', 40));
      const socket = new SocketClient(new OpenAI({ baseURL: small.baseURL, apiKey: 'k', maxRetries: 0 }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      socket.send({ model: 'm', input: 'running', store: false, stream_id: 'lane-run' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const lane of ['lane-0', 'lane-1', 'lane-2']) socket.send({ model: 'm', input: lane, store: false, stream_id: lane });
      const closed = await socket.closed;
      expect(closed.code).toBe(1008);
      const refusals = socket.frames.filter((frame: any) => frame.type === 'error' && frame.error?.code === 'websocket_queue_full');
      for (const refusal of refusals) expectErrorFrame(refusal, 429, 'websocket_queue_full');
      expect(refusals.map((frame: any) => frame.stream_id).sort()).toEqual(['lane-0', 'lane-1', 'lane-2']);
    } finally {
      await small.close();
    }
  });

  it("an upstream's 429 reaches the socket with the headers an HTTP answer would carry (retry-after), as Codex's socket client reads them", async () => {
    upstream.setScript(() => ({ kind: 'json', status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } }));
    const socket = open();
    const [frame] = await socket.create({ model: 'm', input: 'hi' });
    expectErrorFrame(frame!, 429, 'rate_limit_exceeded');
    expect(frame!.headers).toMatchObject({ 'retry-after': '7' });
    upstream.setScript(textReply('Hello'));
  });

  it('a plain GET /v1/responses (no upgrade) is a 426 in the error envelope', async () => {
    const response = await fetch(`${gateway.baseURL}/responses`);
    expect(response.status).toBe(426);
    expect(response.headers.get('upgrade')).toBe('websocket');
    expect(await response.json()).toMatchObject({ error: { code: 'upgrade_required', type: 'invalid_request_error' } });
  });
});

describe('WebSocket transport: authentication, limits and keep-alive', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  let gateway: RunningGateway;

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, { auth: { apiKeys: [{ key: 'sk-client', tenant: 'team-a' }] }, server: { websocketMaxConnectionMs: 600, keepAliveIntervalMs: 100 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('an upgrade without a valid key is refused with 401 before switching protocols', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const refusal = await upgrade(gateway, headers);
      expect(refusal.status).toBe(401);
      expect(JSON.parse(refusal.body)).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
    }
  });

  it('the connection limit: an error frame websocket_connection_limit_reached, then the close; a running response finishes first', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'sk-client', maxRetries: 0 });
    const idle = new SocketClient(client);
    const [limit] = await idle.nextTurn(5_000);
    expectErrorFrame(limit!, 400, 'websocket_connection_limit_reached');
    expect((await idle.closed).code).toBe(1000);

    upstream.setScript(() => slowText('still talking at the limit', 40));
    const busy = new SocketClient(client);
    await new Promise((resolve) => setTimeout(resolve, 300));
    busy.send({ model: 'm', input: 'x', store: false });
    // Waiting behind it when the limit comes: refused unread, but with its stream_id, so the client knows which request it answers.
    busy.send({ model: 'm', input: 'y', store: false, stream_id: 'lane-2' });
    const turn = await busy.nextTurn(5_000);
    expect(finalOf(turn).status).toBe('completed');
    const refused = (await busy.nextTurn())[0]!;
    expectErrorFrame(refused, 400, 'websocket_connection_limit_reached');
    expect(refused.stream_id).toBe('lane-2');
    await busy.closed;
  });

  it('pings the peer: one that answers stays connected, one that does not is cut', async () => {
    const headers = { authorization: 'Bearer sk-client' };
    const answering = new WebSocket(socketUrl(gateway), { headers });
    const silent = new WebSocket(socketUrl(gateway), { headers, autoPong: false });
    let pings = 0;
    answering.on('ping', () => pings++);
    const silentClosed = new Promise<number>((resolve) => silent.on('close', (code) => resolve(code)));
    await Promise.all([answering, silent].map((socket) => new Promise((resolve) => socket.once('open', resolve))));
    expect(await silentClosed).toBe(1006);
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(answering.readyState).toBe(WebSocket.OPEN);
    answering.close();
  });
});

describe('WebSocket transport: shutdown', () => {
  it('a socket with a running response is drained: the response ends (incomplete, server_shutdown) with its terminal event, then the socket closes 1001', async () => {
    const upstream = new ScriptedChatUpstream(() => slowText('x'.repeat(60), 50));
    const url = await upstream.start();
    const gateway = await startGateway(url, { server: { shutdownGraceMs: 300 } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const socket = new SocketClient(client);
    const idle = new SocketClient(client);
    socket.send({ model: 'm', input: 'x' });
    await waitFor(() => socket.frames.some((frame) => frame.type === 'response.output_text.delta'));
    const closing = gateway.close();
    // An idle socket closes at once; new work on the busy one is refused meanwhile.
    expect((await idle.closed).code).toBe(1001);
    const final = finalOf(await socket.nextTurn());
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'server_shutdown' } });
    expect((await socket.closed).code).toBe(1001);
    await closing;
    await upstream.close();
  });
});

describe('WebSocket transport: MCP approvals', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(upstreamUrl, { mcp: { allowedUrls: [new URL(mcpUrl).origin + '/'] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    mcpTool.server_url = mcpUrl;
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  const mcpTool = { type: 'mcp', server_label: 'calc', server_url: '' };

  it('a call that needs approval pauses; the approval continues it on the same socket with store:false', async () => {
    upstream.setScript((request) => {
      const result = (request.body.messages as any[]).find((message) => message.role === 'tool');
      if (result) return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: `Results: ${result.content}` }), chunk({}, 'stop'), usageChunk(5, 2)]) };
      return { kind: 'sse', pieces: sse([chunk({ tool_calls: [{ index: 0, id: 'call_add', type: 'function', function: { name: 'calc__add', arguments: '{"a":1,"b":2}' } }] }), chunk({}, 'tool_calls'), usageChunk(5, 2)]) };
    });
    const socket = new SocketClient(client);
    const paused = finalOf(await socket.create({ model: 'm', input: 'add', store: false, tools: [mcpTool] }));
    expect(paused.status).toBe('requires_action');
    const approval = paused.output.find((item: any) => item.type === 'mcp_approval_request');
    expect(approval).toMatchObject({ name: 'add', arguments: '{"a":1,"b":2}' });
    const resumed = finalOf(await socket.create({ model: 'm', store: false, tools: [mcpTool], previous_response_id: paused.id, input: [{ type: 'mcp_approval_response', approval_request_id: approval.id, approve: true }] }));
    expect(resumed.output.map((item: any) => item.type)).toEqual(['mcp_call', 'message']);
    expect(resumed.output[0]).toMatchObject({ name: 'add', output: '3' });
    expect(resumed.output[1].content[0].text).toBe('Results: 3');
    socket.close();
  });
});
