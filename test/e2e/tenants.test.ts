import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const KEY_A = 'sk-tenant-a-0123456789';
const KEY_A2 = 'sk-tenant-a-second-key';
const KEY_B = 'sk-tenant-b-0123456789';

describe('API keys and tenants', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let gateway: RunningGateway;
  const as = (apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });
  const raw = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${gateway.baseURL}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(init.key && { authorization: `Bearer ${init.key}` }), ...(init.headers as Record<string, string>) } });

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), {
      auth: { apiKeys: [{ key: KEY_A, tenant: 'team-a' }, { key: KEY_A2, tenant: 'team-a' }, { key: KEY_B, tenant: 'team-b' }] },
      server: { host: '127.0.0.1', port: 0, corsOrigins: ['*'] },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('requests without a valid key get 401 in the error envelope', async () => {
    for (const key of [undefined, 'sk-wrong-key-123', `${KEY_A}x`, KEY_A.slice(0, -1)]) {
      const response = await raw('/responses', { method: 'POST', body: JSON.stringify({ model: 'm', input: 'x' }), ...(key && { key }) });
      const body: any = await response.json();
      expect(response.status).toBe(401);
      assertErrorEnvelope(body);
      expect(body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    }
    const basic = await raw('/models', { headers: { authorization: `Basic ${KEY_A}` } });
    expect(basic.status).toBe(401);
    const error = await as('sk-wrong-key-123').responses.create({ model: 'm', input: 'x' }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('however the path is spelled (doubled slashes, escapes, an absolute-form target, a WebSocket upgrade), a /v1 route needs a key', async () => {
    const calls = upstream.requests.length;
    const body = JSON.stringify({ model: 'm', input: 'x' });
    // Node's HTTP client sends the path as written (fetch would tidy it).
    const send = (path: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port: Number(new URL(gateway.origin).port), method: 'POST', path, headers: { 'content-type': 'application/json' } }, (response) => {
          let text = '';
          response.on('data', (piece) => (text += piece));
          response.on('end', () => resolve({ status: response.statusCode!, text }));
        });
        request.on('error', reject);
        request.end(body);
      });
    for (const path of ['//v1/responses', '///v1/responses', '/%761/responses', '/v1//responses', `${gateway.origin}/v1/responses`, '//v1/conversations']) {
      const refused = await send(path);
      expect(refused.status, path).toBe(401);
      const body = JSON.parse(refused.text);
      assertErrorEnvelope(body);
      expect(body.error.code, path).toBe('invalid_api_key');
    }
    const socket = new WebSocket(`${gateway.origin.replace('http', 'ws')}//v1/responses`);
    const outcome = await new Promise<string>((resolve) => {
      socket.onopen = () => resolve('opened');
      socket.onerror = () => resolve('refused');
    });
    expect(outcome).toBe('refused');
    expect(upstream.requests.length).toBe(calls);
  });

  it('health checks and CORS preflights need no key', async () => {
    expect((await fetch(`${gateway.origin}/healthz`)).status).toBe(200);
    const preflight = await raw('/responses', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const fromPage = await fetch(`${gateway.origin}/healthz`, { headers: { origin: 'https://app.example' } });
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('*');
    expect(fromPage.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining-requests');
    expect((await fetch(`${gateway.origin}/healthz`)).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a tenant uses its own responses with any of its keys', async () => {
    const first = await as(KEY_A).responses.create({ model: 'm', input: 'mine' });
    const continued = await as(KEY_A2).responses.create({ model: 'm', input: 'more', previous_response_id: first.id });
    expect(continued.previous_response_id).toBe(first.id);
    expect((await as(KEY_A2).responses.retrieve(first.id)).id).toBe(first.id);
  });

  it("another tenant's response is indistinguishable from an id that never existed", async () => {
    const owned = await as(KEY_A).responses.create({ model: 'm', input: 'private' });
    const randomId = 'resp_00000000000000000000000000000000';
    const probe = async (id: string) => {
      const results = [
        await raw(`/responses/${id}`, { key: KEY_B }),
        await raw(`/responses/${id}/input_items`, { key: KEY_B }),
        await raw(`/responses/${id}`, { method: 'DELETE', key: KEY_B }),
        await raw('/responses', { method: 'POST', key: KEY_B, body: JSON.stringify({ model: 'm', input: 'x', previous_response_id: id }) }),
      ];
      return Promise.all(results.map(async (response) => ({ status: response.status, body: (await response.text()).replaceAll(id, '<id>') })));
    };
    const foreign = await probe(owned.id);
    const unknown = await probe(randomId);
    expect(foreign).toEqual(unknown);
    expect(foreign.map((result) => result.status)).toEqual([404, 404, 404, 404]);
    // And the owner still has it: B's delete did nothing.
    expect((await as(KEY_A).responses.retrieve(owned.id)).id).toBe(owned.id);
  });

  it('item references do not cross tenants', async () => {
    const owned = await as(KEY_A).responses.create({ model: 'm', input: 'private' });
    const itemId = owned.output[0]!.id!;
    const response = await raw('/responses', { method: 'POST', key: KEY_B, body: JSON.stringify({ model: 'm', input: [{ type: 'item_reference', id: itemId }] }) });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.code).toBe('item_not_found');
  });
});

describe('without API keys', () => {
  it('there is one tenant and no authentication', async () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    const gateway = await startGateway(await upstream.start());
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'anything', maxRetries: 0 });
      const other = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'something-else', maxRetries: 0 });
      const created = await client.responses.create({ model: 'm', input: 'x' });
      expect((await other.responses.retrieve(created.id)).id).toBe(created.id);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
