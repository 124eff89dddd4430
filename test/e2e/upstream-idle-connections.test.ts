import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDLE_CONNECTION_MS } from '../../src/providers/http-upstream.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';

const SERVER_IDLE_MS = IDLE_CONNECTION_MS + 500;
const ANSWER = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

/**
 * A Chat Completions server that, like uvicorn (vLLM) or llama.cpp, closes a
 * kept-alive connection after it sat idle a while, and says nothing of that
 * in a `Keep-Alive` header. The close meets a request the gateway is sending
 * on it at that moment: here, deterministically, any request arriving on a
 * connection idle for longer than its bound is cut unanswered.
 */
function closingIdleServer(): Server {
  return createServer((socket: Socket) => {
    let idleSince = Date.now();
    let received = '';
    socket.on('data', (chunk) => {
      if (received === '' && Date.now() - idleSince > SERVER_IDLE_MS - 300) {
        socket.destroy();
        return;
      }
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(received.slice(0, head))?.[1] ?? 0);
      if (received.length < head + 4 + length) return;
      received = '';
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(ANSWER)}\r\n\r\n${ANSWER}`);
      idleSince = Date.now();
    });
    socket.on('error', () => {});
  });
}

describe('pooled upstream connections and a server closing idle ones unannounced', () => {
  let upstream: Server;
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = closingIdleServer();
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`);
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('a request after the connection sat idle goes out on a fresh one, never on one the server is closing: no 502', async () => {
    const create = async () => {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Hi' }) });
      expect(response.status).toBe(200);
      assertValidResponse(await response.json());
    };
    await create();
    await new Promise((resolve) => setTimeout(resolve, SERVER_IDLE_MS - 200));
    await create();
  }, 20_000);
});
