import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { HttpUpstream } from '../../src/providers/http-upstream.ts';
import { invalidUpstreamBody } from '../../src/providers/invalid-upstream-body.ts';
import { errorFromUpstreamStatus } from '../../src/providers/upstream-errors.ts';

/**
 * `HttpUpstream.requestJson` reads answers whole without a body stream; these
 * are the answers an upstream really sends, from a real HTTP server on
 * loopback, each checked for what `request` + `body.json()` made of it.
 */
type Route = (request: IncomingMessage, response: ServerResponse) => void;

const routes: Record<string, Route> = {
  '/json': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"text":"héllo"}'),
  '/bom': (_request, response) => response.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')])),
  // A two-byte character split across two writes (chunked): decoded from the whole body, not per chunk.
  '/split': (_request, response) => {
    const bytes = Buffer.from('{"text":"é"}');
    const cut = bytes.indexOf(0xc3) + 1;
    response.write(bytes.subarray(0, cut));
    setTimeout(() => response.end(bytes.subarray(cut)), 20);
  },
  '/empty': (_request, response) => response.end(),
  '/not-json': (_request, response) => response.end('<html>gateway timeout</html>'),
  '/rate-limited': (_request, response) => response.writeHead(429, { 'retry-after': '7' }).end('{"error":{"message":"Slow down","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}'),
  // Promises more than it sends, then hangs up: the body broke off.
  '/cut': (request, response) => {
    response.writeHead(200, { 'content-length': '1000' });
    response.write('{"partial":');
    setTimeout(() => request.socket.destroy(), 20);
  },
  '/slow': (_request, response) => setTimeout(() => response.end('{}'), 2_000),
  '/echo': (request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => response.end(JSON.stringify({ method: request.method, body, traceparent: request.headers.traceparent ?? null, key: request.headers['x-key'] ?? null })));
  },
};

let server: Server;
let upstream: HttpUpstream;
const invalid = (cause: unknown) => invalidUpstreamBody('scripted', cause);

beforeAll(async () => {
  server = createServer((request, response) => routes[request.url ?? '']?.(request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  upstream = new HttpUpstream({ name: 'scripted', baseUrl: `http://127.0.0.1:${port}`, connections: 4, connectTimeoutMs: 1_000, firstByteTimeoutMs: 5_000, idleTimeoutMs: 5_000, errorFromStatus: errorFromUpstreamStatus });
});

afterAll(async () => {
  await upstream.close();
  server.close();
});

const get = (path: string, signal = new AbortController().signal) => upstream.requestJson('GET', path, null, {}, signal, invalid);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('HttpUpstream.requestJson', () => {
  it('parses a JSON answer, its text decoded as UTF-8', async () => {
    expect(await get('/json')).toEqual({ ok: true, text: 'héllo' });
  });

  it('skips a byte order mark and decodes a character split across chunks', async () => {
    expect(await get('/bom')).toEqual({ bom: 1 });
    expect(await get('/split')).toEqual({ text: 'é' });
  });

  it('sends the method, body, headers and trace context', async () => {
    const answer = await upstream.requestJson('POST', '/echo', '{"a":1}', { 'x-key': 'k' }, AbortSignal.timeout(5_000), invalid, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    expect(answer).toEqual({ method: 'POST', body: '{"a":1}', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', key: 'k' });
  });

  it('calls an empty or non-JSON body invalid, with the parse error as its cause', async () => {
    for (const path of ['/empty', '/not-json']) {
      const error = await failure(get(path));
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
      expect((error as GatewayError).cause).toBeInstanceOf(SyntaxError);
    }
  });

  it("turns an error status into the wire's error, with the body's message and retry-after", async () => {
    const error = await failure(get('/rate-limited'));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect((error as GatewayError).message).toContain('Slow down');
    expect((error as GatewayError).headers['retry-after']).toBe('7');
  });

  it('calls a body that breaks off invalid', async () => {
    expect(await failure(get('/cut'))).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
  });

  it('is aborted by its signal with the signal’s reason, before or while waiting', async () => {
    const early = new AbortController();
    early.abort(new Error('gone before'));
    expect(await failure(get('/json', early.signal))).toMatchObject({ message: 'gone before' });
    const late = new AbortController();
    setTimeout(() => late.abort(new Error('gone while waiting')), 50);
    expect(await failure(get('/slow', late.signal))).toMatchObject({ message: 'gone while waiting' });
  });

  it('maps a refused connection to upstream_unreachable', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    const nowhere = new HttpUpstream({ name: 'gone', baseUrl: `http://127.0.0.1:${port}`, connections: 1, connectTimeoutMs: 1_000, firstByteTimeoutMs: 1_000, idleTimeoutMs: 1_000, errorFromStatus: errorFromUpstreamStatus });
    try {
      expect(await failure(nowhere.requestJson('GET', '/', null, {}, new AbortController().signal, invalid))).toMatchObject({ status: 502, code: 'upstream_unreachable' });
    } finally {
      await nowhere.close();
    }
  });
});
