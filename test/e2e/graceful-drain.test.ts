import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway } from '../support/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { assertValidEvent, assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { chunk, ScriptedChatUpstream, slowText, sse, textCompletion } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** A streamed answer of `text`, one character every `pauseMs`. */
/** Starts a streaming response and resolves once its first text delta arrived; `rest` is the whole body. */
async function startStream(baseURL: string, input: string): Promise<{ rest: Promise<string> }> {
  const response = await fetch(`${baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input, stream: true }) });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('response.output_text.delta')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${text}`);
    text += value;
  }
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += value;
    }
  })();
  return { rest };
}

function exitOf(gateway: GatewayProcess): Promise<{ code: number | null; at: number }> {
  return once(gateway.child, 'exit').then(([code]) => ({ code: code as number | null, at: Date.now() }));
}

/** SIGTERM and SIGINT on the real process (what `npm start` runs), with responses in flight. */
describe('graceful drain', () => {
  const upstream = new ScriptedChatUpstream();
  let upstreamUrl: string;
  let redis: TestRedis;
  const running: GatewayProcess[] = [];
  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    redis = await acquireRedis();
  });
  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.stop()));
    await upstream.close();
    await redis.cleanup();
    await redis.stop();
  });

  it('a request arriving on a kept-alive connection while draining gets a 503 in the error envelope; probes still answer', async () => {
    upstream.setScript((request) => (request.body?.stream ? slowText('slow enough', 40)(request) : textCompletion('ok')));
    const gateway = await startGateway(upstreamUrl, { server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 10_000 } });
    const socket = connect(Number(new URL(gateway.origin).port), '127.0.0.1');
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (piece: string) => (received += piece));
    const body = JSON.stringify({ model: 'm', input: 'x', stream: true });
    socket.write(`POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await waitFor(() => received.includes('output_text.delta'));
    const closed = gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Pipelined behind the stream on the same connection, as a client reusing it would.
    socket.write('GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\nGET /readyz HTTP/1.1\r\nhost: x\r\n\r\n');
    await once(socket, 'close');
    await closed;
    const [, ...later] = received.split(/(?=HTTP\/1\.1 )/);
    expect(received.startsWith('HTTP/1.1 200')).toBe(true);
    expect(received).toContain('event: response.completed');
    expect(later[0]).toMatch(/^HTTP\/1\.1 503/);
    const envelope = JSON.parse(later[0]!.slice(later[0]!.indexOf('\r\n\r\n') + 4));
    expect(envelope).toEqual({ error: { type: 'server_error', code: 'server_shutting_down', param: null, message: expect.any(String) } });
    if (later[1]) expect(later[1]).toMatch(/^HTTP\/1\.1 503[^]*not_ready/);
  });

  it('SIGTERM: new connections are refused at once, a stream in flight finishes, exit 0 (a SIGTERM repeated meanwhile changes nothing)', async () => {
    upstream.setScript((request) => (request.body?.stream ? slowText('drained in time', 60)(request) : textCompletion('ok')));
    const gateway = await startGatewayProcess({ OPENAI_BASE_URL: upstreamUrl, SHUTDOWN_GRACE_MS: '20000' });
    running.push(gateway);
    const stream = await startStream(gateway.baseURL, 'hello');

    const exited = exitOf(gateway);
    const signalledAt = Date.now();
    gateway.child.kill('SIGTERM');
    // Refused well before the stream (about a second) is over.
    await waitFor(async () => {
      try {
        await fetch(`${gateway.origin}/healthz`);
        return false;
      } catch (error) {
        return (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
      }
    }, 500);
    // An operator or supervisor saying it again: the drain goes on.
    gateway.child.kill('SIGTERM');

    const { events, done } = parseSseText(await stream.rest);
    expect(done).toBe(true);
    events.forEach(assertValidEvent);
    const final = assertEventStreamInvariants(events);
    expect(final.status).toBe('completed');
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('')).toBe('drained in time');
    const { code, at } = await exited;
    expect(code).toBe(0);
    // It exits when the work is done, not when the grace is over.
    expect(at - signalledAt).toBeLessThan(10_000);
    expect(gateway.logs.some((line) => /already draining/.test(line.msg))).toBe(true);
  });

  it('after the grace, what still runs ends as incomplete (server_shutdown), is stored as such, and the process exits 0', async () => {
    const prefix = redis.prefix();
    upstream.setScript((request) =>
      // Starts answering, then never finishes.
      request.body?.stream ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'partial' })], false), endAfter: false } : { kind: 'hang' },
    );
    const graceMs = 1_000;
    const gateway = await startGatewayProcess({ OPENAI_BASE_URL: upstreamUrl, SHUTDOWN_GRACE_MS: String(graceMs), REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix });
    running.push(gateway);
    const stream = await startStream(gateway.baseURL, 'never ends');
    const json = fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hangs' }) });
    await waitFor(() => upstream.requests.filter((request) => request.body?.messages?.[0]?.content === 'hangs').length === 1);

    const exited = exitOf(gateway);
    const signalledAt = Date.now();
    gateway.child.kill('SIGINT');

    const { events, done } = parseSseText(await stream.rest);
    expect(done).toBe(true);
    events.forEach(assertValidEvent);
    const streamed = assertEventStreamInvariants(events);
    expect(events.at(-1)!.type).toBe('response.incomplete');
    expect(streamed.status).toBe('incomplete');
    expect(streamed.incomplete_details).toEqual({ reason: 'server_shutdown' });

    const answered = await json;
    expect(answered.status).toBe(200);
    const body = (await answered.json()) as any;
    assertValidResponse(body);
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'server_shutdown' });

    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalledAt).toBeGreaterThanOrEqual(graceMs);
    expect(at - signalledAt).toBeLessThan(graceMs + 8_000);
    expect(gateway.logs.some((line) => line.level === 40 && /grace over/.test(line.msg))).toBe(true);

    // Another replica on the same Redis finds both as they ended.
    const replica = await startGateway(upstreamUrl, { store: { redisUrl: redis.url, keyPrefix: prefix } });
    try {
      for (const [id, text] of [[streamed.id, 'partial'], [body.id, null]] as const) {
        const stored = (await (await fetch(`${replica.baseURL}/responses/${id}`)).json()) as any;
        assertValidResponse(stored);
        expect(stored.status).toBe('incomplete');
        expect(stored.incomplete_details).toEqual({ reason: 'server_shutdown' });
        if (text) expect(stored.output[0].content[0].text).toBe(text);
      }
    } finally {
      await replica.close();
    }
  });

  it("a replica shutting down sends the readers of other replicas' background responses on at once, saying where to resume, and does not wait on them", async () => {
    const prefix = redis.prefix();
    upstream.setScript(slowText('a long background answer', 150));
    const env = { OPENAI_BASE_URL: upstreamUrl, SHUTDOWN_GRACE_MS: '20000', REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
    const [runner, reader] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
    running.push(runner, reader);
    const queued = (await (await fetch(`${runner.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'go', background: true }) })).json()) as { id: string };
    const response = await fetch(`${reader.baseURL}/responses/${queued.id}?stream=true`);
    const body = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('response.output_text.delta')) text += (await body.read()).value ?? '';
    const exited = exitOf(reader);
    const signalledAt = Date.now();
    reader.child.kill('SIGTERM');
    for (;;) {
      const { value, done } = await body.read();
      if (done) break;
      text += value;
    }
    const { events, done } = parseSseText(text);
    expect(done).toBe(false);
    events.forEach(assertValidEvent);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: 'error', error: { code: 'server_shutting_down' } });
    expect(last.error.message).toContain(`starting_after=${events.at(-2)!.sequence_number}`);
    const { code, at } = await exited;
    expect(code).toBe(0);
    // Nothing of its own ran: it exits at once, not after the grace.
    expect(at - signalledAt).toBeLessThan(5_000);
    // The response runs on where it ran; its stream resumes on the other replica from where the reader stood.
    const resumed = await fetch(`${runner.baseURL}/responses/${queued.id}?stream=true&starting_after=${events.at(-2)!.sequence_number}`);
    const rest = parseSseText(await resumed.text());
    expect(rest.events.at(-1)!.type).toBe('response.completed');
  });
});

