import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const UPGRADE = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };

/** A request with the headers a browser page would send, `Host` included (which fetch will not set); its status and body. */
function raw(gateway: RunningGateway, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(gateway.baseURL);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ agent: false, host: hostname, port, method, path, headers: { ...(method === 'POST' && { 'content-type': 'application/json' }), ...headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (body += piece));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, body: '' });
    });
    request.on('error', reject);
    request.end(method === 'POST' ? JSON.stringify({ model: 'm', input: 'x' }) : undefined);
  });
}

/** A page's preflight for a JSON POST, and the POST itself: what the page may read of the answer. */
async function asPage(gateway: RunningGateway, origin: string, authorization?: string): Promise<{ preflight: string | null; answer: string | null; status: number }> {
  const preflight = await fetch(`${gateway.baseURL}/responses`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' } });
  const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { origin, 'content-type': 'application/json', ...(authorization && { authorization }) }, body: JSON.stringify({ model: 'm', input: 'x' }) });
  await answer.text();
  return { preflight: preflight.headers.get('access-control-allow-origin'), answer: answer.headers.get('access-control-allow-origin'), status: answer.status };
}

/**
 * Which pages may call a gateway whose `server.corsOrigins` is not set.
 * Without API keys there is nothing a page must hold: any website a user
 * opened could run responses on the operator's account and read or delete
 * what is stored, so only pages on this machine (a frontend's dev server)
 * may. With keys, a page must hold one: any origin.
 */
describe('browser origins when server.corsOrigins is not set', () => {
  const upstream = new ScriptedChatUpstream(textReply('hi'));
  let open: RunningGateway;
  let keyed: RunningGateway;
  let keyedListing: RunningGateway;

  beforeAll(async () => {
    const url = await upstream.start();
    open = await startGateway(url);
    keyed = await startGateway(url, { auth: { apiKeys: [{ key: 'sk-page-key-1', tenant: 'team-a' }] } });
    keyedListing = await startGateway(url, { auth: { apiKeys: [{ key: 'sk-page-key-1', tenant: 'team-a' }] }, server: { corsOrigins: ['https://app.example'] } });
  });
  afterAll(async () => {
    await Promise.all([open.close(), keyed.close(), keyedListing.close()]);
    await upstream.close();
  });

  it('without API keys: pages on this machine only', async () => {
    // This machine's pages, and its apps and extensions (no website can send an origin of their schemes).
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8000', 'https://app.localhost', 'tauri://localhost', 'chrome-extension://abcdefghijklmnop']) {
      expect(await asPage(open, origin), origin).toEqual({ preflight: origin, answer: origin, status: 200 });
    }
    for (const origin of ['https://evil.example', 'http://192.168.1.20:3000', 'http://localhost.evil.example', 'null']) {
      const seen = await asPage(open, origin);
      expect(seen.preflight, origin).toBeNull();
      expect(seen.answer, origin).toBeNull();
    }
  });

  it('without API keys: a page of a name pointed at this machine (DNS rebinding) is refused, though same-origin to its browser; the gateway\'s own page opened by address is not', async () => {
    const { port } = new URL(open.baseURL);
    const before = upstream.requests.length;
    for (const method of ['POST', 'DELETE'] as const) {
      const rebound = await raw(open, method, method === 'POST' ? '/v1/responses' : '/v1/responses/resp_x', { host: `rebind.evil.test:${port}`, origin: `http://rebind.evil.test:${port}` });
      expect(rebound.status, method).toBe(403);
      const refusal = JSON.parse(rebound.body);
      assertErrorEnvelope(refusal);
      expect(refusal.error).toMatchObject({ type: 'invalid_request_error', code: 'origin_not_allowed' });
    }
    expect(upstream.requests.length).toBe(before);
    const ownByAddress = await raw(open, 'POST', '/v1/responses', { host: `192.0.2.2:${port}`, origin: `http://192.0.2.2:${port}` });
    expect(ownByAddress.status).toBe(200);
    assertValidResponse(JSON.parse(ownByAddress.body));
    // The WebSocket upgrade alike.
    expect((await raw(open, 'GET', '/v1/responses', { host: `rebind.evil.test:${port}`, origin: `http://rebind.evil.test:${port}`, ...UPGRADE })).status).toBe(403);
    expect((await raw(open, 'GET', '/v1/responses', { host: `192.0.2.2:${port}`, origin: `http://192.0.2.2:${port}`, ...UPGRADE })).status).toBe(101);
    // Clients that are not browsers send no Origin, whatever host they name.
    expect((await raw(open, 'POST', '/v1/responses', { host: `loopgate.internal:${port}` })).status).toBe(200);
  });

  it("without API keys: a rebound page's reads, which carry no Origin, are refused by the name they were made to (stored responses, the models list); by address or a localhost name they are answered, as are clients that are not browsers", async () => {
    const { port } = new URL(open.baseURL);
    const stored = JSON.parse((await raw(open, 'POST', '/v1/responses', {})).body);
    assertValidResponse(stored);
    const page = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
    for (const path of [`/v1/responses/${stored.id}`, `/v1/responses/${stored.id}/input_items`, '/v1/models']) {
      const rebound = await raw(open, 'GET', path, { host: `rebind.evil.test:${port}`, ...page });
      expect(rebound.status, path).toBe(403);
      const refusal = JSON.parse(rebound.body);
      assertErrorEnvelope(refusal);
      expect(refusal.error).toMatchObject({ type: 'invalid_request_error', code: 'host_not_allowed' });
      expect(rebound.body).not.toContain(`"id":"${stored.id}"`);
      // A frame or a tab of the rebound name, navigated to it, alike.
      expect((await raw(open, 'GET', path, { host: `rebind.evil.test:${port}`, 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' })).status, path).toBe(403);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `192.0.2.2:${port}`]) expect((await raw(open, 'GET', path, { host, ...page })).status, `${path} ${host}`).toBe(200);
      expect((await raw(open, 'GET', path, { host: `loopgate.internal:${port}` })).status, path).toBe(200);
    }
  });

  it('an OPTIONS answers in the error envelope: a refused page\'s preflight is a 403 origin_not_allowed (not an unknown route), an allowed page\'s without a method is answered as a preflight', async () => {
    for (const gateway of [open, keyedListing]) {
      const refused = await fetch(`${gateway.baseURL}/responses`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      const body = await refused.json();
      assertErrorEnvelope(body);
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'origin_not_allowed' });
    }
    const bare = await fetch(`${open.baseURL}/responses`, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173' } });
    expect(bare.status).toBe(204);
    expect(bare.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    // Not a preflight, no page: an OPTIONS of a path no route serves is still an unknown route.
    const unknown = await fetch(`${keyedListing.baseURL}/nowhere`, { method: 'OPTIONS' });
    expect(unknown.status).toBe(404);
    assertErrorEnvelope(await unknown.json());
  });

  it('with API keys: any origin, the key being what a page must hold', async () => {
    expect(await asPage(keyed, 'https://app.example', 'Bearer sk-page-key-1')).toEqual({ preflight: '*', answer: '*', status: 200 });
    expect((await asPage(keyed, 'https://evil.example')).status).toBe(401);
  });
});

/**
 * A gateway without API keys whose operator set `server.corsOrigins` (a list,
 * or empty: CORS off) keeps other websites' pages out all the same: a page of
 * a name pointed at this machine is refused, for reads, writes and the
 * WebSocket; the gateway's own page is served under a listed origin's host.
 */
describe('browser pages when server.corsOrigins is set and no API key is asked', () => {
  const upstream = new ScriptedChatUpstream(textReply('hi'));
  let upstreamUrl: string;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
  });
  afterAll(async () => {
    await upstream.close();
  });

  for (const listed of [['https://app.example', 'http://gateway.example:8080'], []]) {
    it(`corsOrigins ${JSON.stringify(listed)}: a rebound page is refused; pages by address${listed.length > 0 ? ', of listed origins and under a listed host' : ''} are answered`, async () => {
      const gateway = await startGateway(upstreamUrl, { server: { corsOrigins: listed } });
      try {
        const { port } = new URL(gateway.baseURL);
        const before = upstream.requests.length;
        const rebound = { host: `rebind.evil.test:${port}`, origin: `http://rebind.evil.test:${port}` };
        for (const [method, path] of [['POST', '/v1/responses'], ['DELETE', '/v1/responses/resp_x']] as const) {
          const refused = await raw(gateway, method, path, rebound);
          expect(refused.status, method).toBe(403);
          const body = JSON.parse(refused.body);
          assertErrorEnvelope(body);
          expect(body.error.code).toBe('origin_not_allowed');
        }
        expect((await raw(gateway, 'GET', '/v1/models', { host: rebound.host, 'sec-fetch-site': 'same-origin' })).status).toBe(403);
        expect((await raw(gateway, 'GET', '/v1/responses', { ...rebound, ...UPGRADE })).status).toBe(403);
        expect(upstream.requests.length).toBe(before);
        const byAddress = await raw(gateway, 'POST', '/v1/responses', { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` });
        expect(byAddress.status).toBe(200);
        assertValidResponse(JSON.parse(byAddress.body));
        if (listed.length > 0) {
          expect((await raw(gateway, 'POST', '/v1/responses', { origin: 'https://app.example' })).status).toBe(200);
          // The gateway's own page, served under the listed origin's host (behind a proxy that keeps Host).
          expect((await raw(gateway, 'GET', '/v1/models', { host: 'gateway.example:8080', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
          expect((await raw(gateway, 'POST', '/v1/responses', { host: 'gateway.example:8080', origin: 'http://gateway.example:8080' })).status).toBe(200);
        }
      } finally {
        await gateway.close();
      }
    });
  }
});
