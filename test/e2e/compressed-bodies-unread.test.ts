import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** One raw request (a GET may carry a body on the wire, which fetch will not send); its status and body. */
function send(origin: string, method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${origin}${path}`, { method, headers: { ...headers, 'content-length': String(body.length) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * A compressed body on a request whose route reads no body (a probe, a GET,
 * a POST refused for its content type before its body is read): its coding is
 * nobody's concern, and above all it must not bring the process down — one
 * such request from anyone who reaches the port (the probes need no key) did.
 */
describe('compressed bodies nobody reads', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGatewayProcess({ OPENAI_BASE_URL: await upstream.start(), API_KEYS: JSON.stringify({ 'sk-unread-bodies-1': 'team' }) });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  it('GET and HEAD with a body that is no gzip, a POST refused for its content type: each answered, and the gateway stays up', async () => {
    const junk = Buffer.from('this is not gzip at all');
    for (const coding of ['gzip', 'br', 'zstd', 'deflate']) {
      expect((await send(gateway.origin, 'GET', '/healthz', { 'content-encoding': coding }, junk)).status).toBe(200);
      expect((await send(gateway.origin, 'HEAD', '/readyz', { 'content-encoding': coding }, junk)).status).toBe(200);
      expect((await send(gateway.origin, 'GET', '/v1/models', { 'content-encoding': coding, authorization: 'Bearer sk-unread-bodies-1' }, junk)).status).toBe(200);
      const refused = await send(gateway.origin, 'POST', '/v1/responses', { 'content-encoding': coding, 'content-type': 'text/plain', authorization: 'Bearer sk-unread-bodies-1' }, junk);
      expect(refused.status).toBe(415);
      assertErrorEnvelope(JSON.parse(refused.text));
    }
    // A WebSocket upgrade (a GET without a body) saying gzip.
    const socket = new WebSocket(`${gateway.origin.replace('http:', 'ws:')}/v1/responses`, { headers: { 'content-encoding': 'gzip', authorization: 'Bearer sk-unread-bodies-1' } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.close();
    // Still up, and still serving.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${gateway.origin}/healthz`)).status).toBe(200);
  });
});
