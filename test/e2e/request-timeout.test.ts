import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion } from '../support/scripted-chat-upstream.ts';
import { finalOf, SocketClient } from '../support/socket-client.ts';

const REQUEST_TIMEOUT_MS = 800;

/** What a client that sends `head`, then one byte of `trickle` every 200 ms, gets back, and after how long. */
function trickle(port: number, head: string, trickle: string): Promise<{ raw: string; afterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let raw = '';
    let sent = 0;
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    const timer = setInterval(() => {
      if (sent < trickle.length && socket.writable) socket.write(trickle[sent++]!);
    }, 200);
    socket.on('data', (piece) => (raw += piece));
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ raw, afterMs: Date.now() - started });
    });
    socket.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
  });
}

function errorOf(raw: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(raw)?.[1]);
  return { status, body: JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) };
}

describe('a request that takes too long to arrive (server.requestTimeoutMs)', () => {
  // Streams outlive the bound: 6 pieces 300 ms apart.
  const pieces = sse([chunk({ role: 'assistant', content: '' }), ...'slowly, word by word'.split(' ').map((word) => chunk({ content: `${word} ` })), chunk({}, 'stop')]);
  const upstream = new ScriptedChatUpstream((request) => (request.body.stream ? { kind: 'sse', pieces, pauseMs: 300 } : { ...textCompletion('at last'), delayMs: 3 * REQUEST_TIMEOUT_MS }));
  let gateway: RunningGateway;
  let port: number;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, requestTimeoutMs: REQUEST_TIMEOUT_MS } });
    port = Number(new URL(gateway.baseURL).port);
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('a body trickling in is cut with a 408 in the error envelope, and the connection closed', async () => {
    const body = JSON.stringify({ model: 'm', input: 'hello there, this arrives slowly' });
    const { raw, afterMs } = await trickle(port, `POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body);
    const { status, body: error } = errorOf(raw);
    expect(status).toBe(408);
    assertErrorEnvelope(error);
    expect(error.error).toMatchObject({ code: 'request_timeout', type: 'invalid_request_error', param: null });
    // The bound plus the checking interval (a quarter of it), with room for a loaded machine.
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
    expect(afterMs).toBeLessThan(REQUEST_TIMEOUT_MS * 4);
    expect(upstream.requests).toHaveLength(0);
  });

  it('headers trickling in are cut the same way', async () => {
    const { raw } = await trickle(port, 'POST /v1/responses HTTP/1.1\r\n', 'Host: x\r\nContent-Type: application/json\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa\r\n\r\n');
    const { status, body } = errorOf(raw);
    expect(status).toBe(408);
    expect(body.error.code).toBe('request_timeout');
  });

  it('does not bound responses: a stream and a slow JSON answer longer than it both finish', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
    const started = Date.now();
    const response = await client.responses.create({ model: 'm', input: 'slow answer' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * REQUEST_TIMEOUT_MS);
    assertValidResponse(response);
    expect(response.output_text).toBe('at last');

    const streamed = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'stream it', stream: true }) });
    const { events, done } = parseSseText(await streamed.text());
    expect(done).toBe(true);
    assertEventStreamInvariants(events);
    expect(events.at(-1)!.type).toBe('response.completed');
    expect((events.at(-1) as any).response.output[0].content[0].text).toBe('slowly, word by word ');
  });

  it('does not bound a WebSocket connection: turns after the bound are answered', async () => {
    const socket = new SocketClient(new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused' }));
    try {
      const first = await socket.create({ model: 'm', input: 'first' });
      expect(assertEventStreamInvariants(first as never).status).toBe('completed');
      await new Promise((resolve) => setTimeout(resolve, 2 * REQUEST_TIMEOUT_MS));
      const second = await socket.create({ model: 'm', input: 'second', previous_response_id: finalOf(first).id });
      expect(assertEventStreamInvariants(second as never).status).toBe('completed');
    } finally {
      socket.close();
    }
  });

  it('a kept-alive connection idle between requests is not answered with a 408', async () => {
    const exchange = await new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ model: 'm', input: 'again' });
      const request = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let raw = '';
      let askedAgain = false;
      socket.on('data', (piece) => {
        raw += piece;
        // A second answer starts right after the first one's body, not on a line of its own.
        const answers = raw.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
        if (answers === 2 && raw.endsWith('}')) socket.end();
        // Once the first answer is in, stay idle past the bound, then ask again on the same connection.
        if (answers === 1 && raw.includes('"status":"completed"') && !askedAgain) {
          askedAgain = true;
          setTimeout(() => socket.write(request), 2 * REQUEST_TIMEOUT_MS);
        }
      });
      socket.on('close', () => resolve(raw));
      socket.on('error', reject);
    });
    const statuses = [...exchange.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    expect(statuses).toEqual(['200', '200']);
  });
});
