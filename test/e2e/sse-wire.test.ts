import { ServerResponse, request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { chunk, ScriptedChatUpstream, sse, textReply, usageChunk } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';


/** The bytes on the wire, below any SDK. */
describe('SSE on the wire', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello, world'));
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, keepAliveIntervalMs: 100 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    upstream.setScript(textReply('Hello, world'));
  });

  it('writes whole events only, LF only, ending with [DONE]', async () => {
    const writes: string[] = [];
    const original = ServerResponse.prototype.write;
    vi.spyOn(ServerResponse.prototype, 'write').mockImplementation(function (this: ServerResponse, data: any, ...rest: any[]) {
      if ((this as any).req?.url === '/v1/responses') writes.push(Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
      return (original as any).call(this, data, ...rest);
    });
    // The last frames may leave with the end of the response.
    const originalEnd = ServerResponse.prototype.end;
    vi.spyOn(ServerResponse.prototype, 'end').mockImplementation(function (this: ServerResponse, data: any, ...rest: any[]) {
      if ((this as any).req?.url === '/v1/responses' && (typeof data === 'string' || Buffer.isBuffer(data)) && data.length > 0) writes.push(Buffer.isBuffer(data) ? data.toString('utf8') : data);
      return (originalEnd as any).call(this, data, ...rest);
    });
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', stream: true }) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const text = await response.text();

    expect(writes.join('')).toBe(text);
    // The frames of one tick leave in one write (sse-writer.ts); no frame is ever split between writes.
    for (const write of writes) {
      expect(write, 'a write is whole frames').toMatch(/^(event: [a-z_.]+\ndata: [^\n]+\n\n|data: \[DONE\]\n\n|: keep-alive\n\n)+$/);
    }
    const { events, done } = parseSseText(text);
    expect(done).toBe(true);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.match(/^event: /gm)).toHaveLength(events.length);
    assertEventStreamInvariants(events);
  });

  it('a read never ends inside an event', async () => {
    const reads = await new Promise<string[]>((resolve, reject) => {
      const collected: string[] = [];
      const req = httpRequest(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (piece: string) => collected.push(piece));
        res.on('end', () => resolve(collected));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', input: 'hi', stream: true }));
    });
    for (const read of reads) expect(read.endsWith('\n\n')).toBe(true);
  });

  it('sends keep-alive comments while the upstream is silent', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: [...sse([chunk({ content: 'a' })], false), ...sse([chunk({ content: 'b' }), chunk({}, 'stop'), usageChunk(1, 2)])].flatMap((piece, index) => (index === 1 ? ['', piece] : [piece])), pauseMs: 200 }));
    const text = await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', stream: true }) })).text();
    expect(text).toContain(': keep-alive\n\n');
    const { events } = parseSseText(text);
    expect(assertEventStreamInvariants(events).output[0].content[0].text).toBe('ab');
  });

  it('respects backpressure: a client that stops reading stops the upstream too', async () => {
    // ~24 MB: three times what the socket buffers along the way held here (~8 MB).
    const total = 6_000;
    const delta = 'x'.repeat(4_000);
    let written = 0;
    // Count the pieces the upstream managed to hand to its socket.
    const original = ServerResponse.prototype.write;
    vi.spyOn(ServerResponse.prototype, 'write').mockImplementation(function (this: ServerResponse, data: any, ...rest: any[]) {
      if ((this as any).req?.url === '/v1/chat/completions') written++;
      return (original as any).call(this, data, ...rest);
    });
    upstream.setScript(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: total }, () => chunk({ content: delta })), chunk({}, 'stop')]) }));

    let received = 0;
    const done = new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.pause();
        setTimeout(() => {
          res.on('data', (piece: Buffer) => (received += piece.length));
          res.on('end', () => resolve(received));
          res.resume();
        }, 1_000);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', input: 'hi', stream: true }));
    });
    await new Promise((resolve) => setTimeout(resolve, 900));
    const writtenWhilePaused = written;
    expect(writtenWhilePaused, 'the gateway stopped pulling from the upstream').toBeLessThan(total * 0.6);
    expect(await done).toBeGreaterThan(total * delta.length);
    expect(written).toBeGreaterThanOrEqual(total);
  });

  it('a client that disconnects mid-stream aborts the upstream request', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: sse(Array.from({ length: 200 }, () => chunk({ content: 'tick ' }))), pauseMs: 20 }));
    const before = upstream.abortedRequests;
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', stream: true }), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const abortedAt = Date.now();
    await waitFor(() => upstream.abortedRequests > before);
    expect(Date.now() - abortedAt).toBeLessThan(500);
  });

  it('a non-streaming client that disconnects aborts the upstream request', async () => {
    upstream.setScript(() => ({ kind: 'hang' }));
    const before = upstream.abortedRequests;
    const requests = upstream.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi' }), signal: controller.signal }).catch(() => null);
    await waitFor(() => upstream.requests.length > requests);
    controller.abort();
    await pending;
    await waitFor(() => upstream.abortedRequests > before, 500);
  });
});

/**
 * A streaming client that stays connected but stops reading held its
 * response, and the upstream connection it is read from, until the
 * response's deadline: enough of them took every connection to the upstream,
 * and everyone else's requests waited. It is cut once it has taken nothing
 * for `server.clientStallTimeoutMs`, and its response ends `cancelled`.
 */
describe('a streaming client that stops reading', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, keepAliveIntervalMs: 100, clientStallTimeoutMs: 300 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('is cut once it took nothing for the stall bound; the upstream call is released and the response kept as cancelled', async () => {
    // ~24 MB, more than the socket buffers along the way hold: the gateway's writes to the client fill up and wait.
    const delta = 'x'.repeat(4_000);
    upstream.setScript(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 6_000 }, () => chunk({ content: delta })), chunk({}, 'stop')]) }));
    const before = upstream.abortedRequests;
    let firstBytes = '';
    const closed = new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.once('data', (piece: Buffer) => {
          firstBytes = piece.toString('utf8');
          res.pause();
        });
        res.on('close', () => resolve());
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', input: 'hi', stream: true }));
    });
    await waitFor(() => upstream.abortedRequests > before, 10_000, 50);
    const id = /"id":"(resp_[0-9a-f]+)"/.exec(firstBytes)?.[1];
    expect(id).toBeDefined();
    await waitFor(async () => ((await (await fetch(`${gateway.baseURL}/responses/${id}`)).json()) as { status?: string }).status === 'cancelled', 5_000, 50);
    closed.catch(() => {});
  }, 20_000);
});
