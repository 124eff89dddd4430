import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPSTREAM_BODY_BYTES } from '../../src/providers/upstream-answer-limits.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';

/** Writes `piece` for as long as the gateway reads, as fast as it reads: a body that never ends. */
function endless(res: ServerResponse, opening: string, piece: string): void {
  res.write(opening);
  const more = () => {
    while (!res.destroyed && res.write(piece));
    if (!res.destroyed) res.once('drain', more);
  };
  more();
}

/**
 * An upstream whose answer never ends (a JSON document, or one SSE line)
 * was read for as long as the response's deadline allowed, every byte kept:
 * the gateway's memory grew by a hundred megabytes a second. It is read up
 * to a bound, then the call fails as an answer the gateway could not read.
 */
describe('an upstream answer that never ends', () => {
  let upstream: Server;
  let gateway: RunningGateway;
  let bytesSent = 0;

  beforeAll(async () => {
    upstream = createServer((request, res) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
        res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
        const piece = 'x'.repeat(64 * 1024);
        res.on('drain', () => (bytesSent += piece.length));
        endless(res, streamed ? 'data: {"choices":[{"index":0,"delta":{"content":"' : '{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"', piece);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`);
  });
  afterAll(async () => {
    await gateway.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it.each([false, true])('stream %s: a 502 upstream_invalid_response saying the answer or event was too large, once the bound is passed', async (stream) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Hi', stream }) });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assertErrorEnvelope(body);
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.error.message).toMatch(stream ? /sent an event larger than 32 Mi characters/ : /sent an answer larger than 64 MiB/);
    // Read up to the bound, not much beyond it.
    expect(bytesSent).toBeLessThan(MAX_UPSTREAM_BODY_BYTES * 2);
  }, 60_000);
});
