import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { delta, parsePrometheusText, sumOf } from '../support/prometheus-text.ts';
import { freePort } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const KEYS = [
  { key: 'sk-team-a-0123456789', tenant: 'team-a' },
  { key: 'sk-team-b-0123456789', tenant: 'team-b' },
];
const TOKEN = 'metrics-token-0123456789';

/** The OpenResponses error envelope, with the status it came with. */
async function errorOf(response: Response): Promise<{ status: number; error: Record<string, unknown> }> {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return { status: response.status, error: body.error };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Who may read /metrics: tokens, API keys, a port of its own, metrics off. */
describe('metrics access', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  let upstreamUrl: string;
  let gateway: RunningGateway | null = null;

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = null;
  });
  afterAll(() => upstream.close());

  it('with API keys and no metrics token, the main port refuses every scrape, tenant keys included (403, error envelope)', async () => {
    gateway = await startGateway(upstreamUrl, { auth: { apiKeys: KEYS } });
    for (const headers of [{}, bearer(KEYS[0]!.key)]) {
      const refused = await errorOf(await fetch(`${gateway.origin}/metrics`, { headers }));
      expect(refused).toMatchObject({ status: 403, error: { type: 'permission_error', code: 'metrics_token_required', param: null } });
      expect(refused.error.message).toContain('metrics.token');
    }
  });

  it('with a metrics token, only it reads the metrics; tokens are counted per tenant of the API key', async () => {
    gateway = await startGateway(upstreamUrl, { auth: { apiKeys: KEYS }, metrics: { token: TOKEN } });
    for (const headers of [{}, bearer(KEYS[0]!.key), bearer(`${TOKEN}x`), { authorization: TOKEN }]) {
      expect(await errorOf(await fetch(`${gateway.origin}/metrics`, { headers }))).toMatchObject({ status: 401, error: { type: 'authentication_error', code: 'invalid_metrics_token' } });
    }
    const scrape = async () => {
      const response = await fetch(`${gateway!.origin}/metrics`, { headers: bearer(TOKEN) });
      expect(response.status).toBe(200);
      return parsePrometheusText(await response.text());
    };
    const before = await scrape();
    for (const { key } of KEYS) {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
      assertValidResponse(await client.responses.create({ model: 'm', input: 'hi' }));
    }
    await new OpenAI({ baseURL: gateway.baseURL, apiKey: KEYS[1]!.key, maxRetries: 0 }).responses.create({ model: 'm', input: 'again' });
    const after = await scrape();
    expect(delta(before, after, 'loopgate_responses_total', { status: 'completed' })).toBe(3);
    const input = (tenant: string) => delta(before, after, 'loopgate_tokens_total', { tenant, type: 'input' });
    expect(input('team-a')).toBeGreaterThan(0);
    expect(input('team-b')).toBe(2 * input('team-a'));
    expect(input('default')).toBe(0);
    // A request without a key is refused before it is a response; it still counts as a request.
    expect((await fetch(`${gateway.baseURL}/responses`, { method: 'POST' })).status).toBe(401);
    expect(delta(after, await scrape(), 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: '401' })).toBe(1);
  });

  it('on a port of its own: served there (open, for an internal network) and not on the main port; other paths and methods get the error envelope', async () => {
    const port = await freePort();
    gateway = await startGateway(upstreamUrl, { auth: { apiKeys: KEYS }, metrics: { port, host: '127.0.0.1', path: '/internal/metrics' } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: KEYS[0]!.key, maxRetries: 0 });
    await client.responses.create({ model: 'm', input: 'hi' });

    const scraped = await fetch(`http://127.0.0.1:${port}/internal/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const parsed = parsePrometheusText(await scraped.text());
    expect(sumOf(parsed, 'loopgate_responses_total', { status: 'completed' })).toBe(1);
    expect(sumOf(parsed, 'loopgate_tokens_total', { tenant: 'team-a', type: 'input' })).toBeGreaterThan(0);
    // The process's own metrics come along.
    expect(parsed.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(parsed.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');

    expect((await errorOf(await fetch(`http://127.0.0.1:${port}/metrics`))).status).toBe(404);
    expect((await errorOf(await fetch(`http://127.0.0.1:${port}/internal/metrics`, { method: 'POST' }))).status).toBe(405);
    expect((await errorOf(await fetch(`${gateway.origin}/internal/metrics`))).status).toBe(404);
    expect((await errorOf(await fetch(`${gateway.origin}/metrics`))).status).toBe(404);

    await gateway.close();
    gateway = null;
    await expect(fetch(`http://127.0.0.1:${port}/internal/metrics`)).rejects.toThrow();
  });

  it('a separate port with a token wants the token there too; a port already taken stops the start', async () => {
    const port = await freePort();
    gateway = await startGateway(upstreamUrl, { metrics: { port, host: '127.0.0.1', token: TOKEN } });
    expect((await errorOf(await fetch(`http://127.0.0.1:${port}/metrics`))).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: bearer(TOKEN) })).status).toBe(200);
    await expect(startGateway(upstreamUrl, { metrics: { port, host: '127.0.0.1' } })).rejects.toThrow(/EADDRINUSE/);
  });

  it('with metrics off there is no /metrics, and the OpenAPI document lists none', async () => {
    gateway = await startGateway(upstreamUrl, { metrics: { enabled: false } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    assertValidResponse(await client.responses.create({ model: 'm', input: 'hi' }));
    expect((await errorOf(await fetch(`${gateway.origin}/metrics`))).status).toBe(404);
    const document = (await (await fetch(`${gateway.origin}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(document.paths).not.toHaveProperty('/metrics');
    expect(document.paths).toHaveProperty('/version');
  });
});
