import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
import { anthropic } from '../support/provider-flavors.ts';
import { waitFor } from '../support/wait-for.ts';

describe('service endpoints', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, corsOrigins: ['https://app.example'] }, models: { fast: { provider: 'openai', model: 'upstream-fast' }, 'team/fast': { provider: 'openai', model: 'upstream-fast' } } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('GET /v1/models lists aliases and upstream models in the OpenAI list shape', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      expect(model.object).toBe('model');
      expect(typeof model.owned_by).toBe('string');
      ids.push(model.id);
    }
    expect(ids).toEqual(['fast', 'team/fast', 'upstream-model']);
  });

  it('GET /v1/models/{model} answers one listed model, a slash in its name sent either way, and a 404 model_not_found for any other', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    expect(await client.models.retrieve('fast')).toEqual({ id: 'fast', object: 'model', created: 0, owned_by: 'openai' });
    expect(await client.models.retrieve('upstream-model')).toMatchObject({ id: 'upstream-model', object: 'model' });
    // The SDK sends the slash as %2F; curl users send it raw.
    expect(await client.models.retrieve('team/fast')).toMatchObject({ id: 'team/fast' });
    expect(await (await fetch(`${gateway.baseURL}/models/team/fast`)).json()).toMatchObject({ id: 'team/fast' });
    const missing = await client.models.retrieve('no-such-model').then(
      () => null,
      (error: unknown) => error,
    );
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
  });

  it('a model alias routes to its upstream name and is echoed as the client named it', async () => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fast', input: 'x' }) });
    const body = (await response.json()) as any;
    assertValidResponse(body);
    expect(body.model).toBe('fast');
    expect(upstream.requests.at(-1)!.body.model).toBe('upstream-fast');
  });

  it('health and readiness', async () => {
    expect(await (await fetch(`${gateway.origin}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', dependencies: { store: { kind: 'memory', state: 'ready' }, providers: [{ name: 'openai', type: 'openai-chat', state: 'configured' }], mcp_servers: [] } });
  });

  it('CORS: a path the router refuses before any hook (bad percent-encoding, an over-long id) is readable by an allowed page, its preflight answered', async () => {
    for (const path of ['/responses/resp_%zz', `/responses/resp_${'a'.repeat(600)}`]) {
      const preflight = await fetch(`${gateway.baseURL}${path}`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization');
      const refused = await fetch(`${gateway.baseURL}${path}`, { headers: { origin: 'https://app.example' } });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(refused.headers.get('access-control-expose-headers')).toContain('x-request-id');
      expect(((await refused.json()) as any).error.type).toBe('invalid_request_error');
      const foreign = await fetch(`${gateway.baseURL}${path}`, { headers: { origin: 'https://evil.example' } });
      expect(foreign.status).toBe(400);
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('CORS: allowed origins get preflight and exposed headers, others do not', async () => {
    const preflight = await fetch(`${gateway.baseURL}/responses`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', stream: true }) });
    await response.text();
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(response.headers.get('access-control-expose-headers')).toContain('x-request-id');
    // The SDKs read it before the status; a page must be able to, or the browser SDK retries what cannot pass.
    expect(response.headers.get('access-control-expose-headers')).toContain('x-should-retry');
    const other = await fetch(`${gateway.origin}/healthz`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // Not a browser's cross-origin request: no CORS headers, and caches told that the answer depends on Origin.
    const plain = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
    expect(plain.status).toBe(200);
    expect([...plain.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    expect(plain.headers.get('vary')).toMatch(/origin/i);
  });
});

describe('launch contract: `npm start` entry point with environment variables', () => {
  it("what libraries print to the console (the Anthropic SDK's deprecation warning, on every call) is a JSON log line, not stderr text", async () => {
    const upstream = new ScriptedChatUpstream();
    upstream.setScript((request) => anthropic.render(request, { text: 'still served' }));
    const gateway = await startGatewayProcess({ ANTHROPIC_BASE_URL: new URL(await upstream.start()).origin, ANTHROPIC_API_KEY: 'sk-ant-env' });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      // A model the SDK lists as deprecated: it warns with console.warn, whatever logger it was given.
      expect((await client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi' })).output_text).toBe('still served');
      // Said again on every call: logged once.
      expect((await client.responses.create({ model: 'claude-sonnet-4-5', input: 'again' })).output_text).toBe('still served');
      await waitFor(() => gateway.logs.some((entry) => entry.source === 'console'));
      expect(gateway.logs.filter((entry) => entry.source === 'console')).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining("The model 'claude-sonnet-4-5' is deprecated") })]);
      expect(gateway.stderr()).not.toContain('deprecated');
      expect(gateway.notJson).toEqual([]);
    } finally {
      expect(await gateway.stop()).toBe(0);
      await upstream.close();
    }
  });

  it('starts from env alone, serves the SDK, logs pino JSON with the request id, and stops on SIGTERM', async () => {
    const upstream = new ScriptedChatUpstream(textReply('from the spawned gateway'));
    const gateway = await startGatewayProcess({ OPENAI_BASE_URL: await upstream.start(), OPENAI_API_KEY: 'sk-env' });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      const response = await client.responses.create({ model: 'any-model-name', input: 'hi' });
      expect(response.output_text).toBe('from the spawned gateway');
      expect(upstream.requests[0]!.body.model).toBe('any-model-name');
      expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-env');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const requestLines = gateway.logs.filter((entry) => entry.request_id === response._request_id);
      expect(requestLines.length).toBeGreaterThan(0);
      expect(requestLines.every((entry) => typeof entry.level === 'number' && typeof entry.time === 'number')).toBe(true);
      // One line per response at info, with the request id; the loop's per-turn lines are debug detail.
      expect(requestLines.filter((entry) => entry.loop)).toEqual([]);
      expect(requestLines.filter((entry) => entry.msg === 'response finished')).toEqual([
        expect.objectContaining({ level: 30, response_id: response.id, model: 'any-model-name', provider: 'openai', status: 'completed', turns: 1 }),
      ]);
    } finally {
      expect(await gateway.stop()).toBe(0);
      await upstream.close();
    }
  });
});
