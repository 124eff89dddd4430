import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, type FlavorName } from '../support/provider-flavors.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** How each upstream says "your key is wrong" and "no such model", in its own words (recorded from the real APIs). */
const refusals: Record<FlavorName, { auth: { label: string; reply: UpstreamReply }[]; noSuchModel: UpstreamReply }> = {
  'openai-chat': {
    auth: [401, 403].map((status) => ({ label: `${status}`, reply: openaiKeyRefused(status) })),
    noSuchModel: { kind: 'json', status: 404, body: { error: { message: 'The model `nope` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found', param: null } } },
  },
  anthropic: {
    auth: [401, 403].map((status) => ({ label: `${status}`, reply: { kind: 'json', status, body: { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'permission_error', message: 'invalid x-api-key' } } } })),
    noSuchModel: { kind: 'json', status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'model: nope' } } },
  },
  'openai-responses': {
    auth: [401, 403].map((status) => ({ label: `${status}`, reply: openaiKeyRefused(status) })),
    // The Responses API says so with a 400, not a 404.
    noSuchModel: { kind: 'json', status: 400, body: { error: { message: "The requested model 'nope' does not exist.", type: 'invalid_request_error', param: 'model', code: 'model_not_found' } } },
  },
  gemini: {
    auth: [
      // A wrong API key is a 400 to Gemini, told apart by its ErrorInfo reason.
      {
        label: '400 API_KEY_INVALID',
        reply: {
          kind: 'json',
          status: 400,
          body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }] } },
        },
      },
      { label: '401', reply: { kind: 'json', status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', status: 'UNAUTHENTICATED' } } } },
      { label: '403', reply: { kind: 'json', status: 403, body: { error: { code: 403, message: 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.', status: 'PERMISSION_DENIED' } } } },
    ],
    noSuchModel: { kind: 'json', status: 404, body: { error: { code: 404, message: 'models/nope is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.', status: 'NOT_FOUND' } } },
  },
};

function openaiKeyRefused(status: number): UpstreamReply {
  return { kind: 'json', status, body: { error: { message: 'Incorrect API key provided: sk-te**', type: 'invalid_request_error', code: 'invalid_api_key', param: null } } };
}
const wrongPath: UpstreamReply = { kind: 'json', status: 404, body: '404 page not found', headers: { 'content-type': 'text/plain' } };
const SECRETS = ['sk-test', 'sk-ant-test', 'AIza-test'];

describe.each(flavors)('the gateway\'s own misconfiguration is a 502 that names itself, never the client\'s error: $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const lines: Record<string, any>[] = [];
  let gateway: RunningGateway;
  let baseUrl: string;
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, ...body }) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const errorLines = () => lines.filter((line) => line.level === 50 && line.provider);

  beforeAll(async () => {
    const url = await upstream.start();
    const config = flavor.config(url) as { providers: Record<string, { baseUrl: string }> };
    baseUrl = Object.values(config.providers)[0]!.baseUrl;
    gateway = await startGateway(url, { ...config, logLevel: 'info' }, {}, [new MockExecutor(['lookup'])], { write: (line) => lines.push(JSON.parse(line)) });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    const written = JSON.stringify(lines);
    for (const secret of SECRETS) expect(written).not.toContain(secret);
  });

  it.each(refusals[flavor.name].auth)('upstream $label (the gateway\'s key refused): 502 upstream_auth_failed, JSON and streaming, one error line with provider and base URL', async ({ reply }) => {
    upstream.setScript(() => reply);
    for (const stream of [false, true]) {
      const answer = await post({ input: 'x', stream });
      expect(answer.status).toBe(502);
      const body = JSON.parse(answer.text);
      assertErrorEnvelope(body);
      expect(body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_auth_failed' });
      expect(body.error.message).toContain("gateway's credentials");
      // A 5xx the SDKs would otherwise retry, though nothing changes until the operator fixes the key.
      expect(answer.headers.get('x-should-retry')).toBe('false');
      // Said once for the gateway's whole log so far, however often it came (a wrong key under load is not a line per request).
      expect(errorLines().filter((line) => line.code === 'upstream_auth_failed')).toEqual([expect.objectContaining({ provider: flavor.provider, base_url: baseUrl, code: 'upstream_auth_failed' })]);
    }
  });

  it('the official SDK, retrying as it does by default, calls a provider whose key is refused once, not three times', async () => {
    upstream.setScript(() => refusals[flavor.name].auth[0]!.reply);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key' });
    const calls = upstream.requests.length;
    const error = await client.responses.create({ model: flavor.model, input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
    expect(upstream.requests.length - calls).toBe(1);
  });

  it('upstream 404 on its path (a base URL missing /v1): 502 upstream_not_found, logged', async () => {
    upstream.setScript(() => wrongPath);
    const answer = await post({ input: 'x' });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.text).error).toMatchObject({ type: 'upstream_error', code: 'upstream_not_found' });
    expect(answer.headers.get('x-should-retry')).toBe('false');
    // Said once for the gateway's whole log so far, however often it came (a wrong key under load is not a line per request).
      expect(errorLines().filter((line) => line.code === 'upstream_not_found')).toEqual([expect.objectContaining({ base_url: baseUrl, code: 'upstream_not_found' })]);
  });

  // The Anthropic SDK follows redirects itself (fetch); the gateway's own HTTP upstreams follow none and say where they point.
  it.each(flavor.name === 'anthropic' ? [] : [301, 307])('upstream redirect %i (a base URL on http:// where https:// is served): 502 upstream_redirected naming where it points, logged, streamed or not', async (status) => {
    upstream.setScript(() => ({ kind: 'json', status, body: '', headers: { location: 'https://api.example.com/v1/chat/completions' } }));
    for (const stream of [false, true]) {
      const answer = await post({ input: 'x', stream });
      expect(answer.status).toBe(502);
      const { error } = JSON.parse(answer.text);
      assertErrorEnvelope({ error });
      expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_redirected' });
      expect(error.message).toContain(`${status} to https://api.example.com/v1/chat/completions`);
      expect(answer.headers.get('x-should-retry')).toBe('false');
      // Said once for the gateway's whole log so far, however often it came (a wrong key under load is not a line per request).
      expect(errorLines().filter((line) => line.code === 'upstream_redirected')).toEqual([expect.objectContaining({ base_url: baseUrl, code: 'upstream_redirected' })]);
    }
  });

  // The Anthropic SDK asks for and reads compressed answers itself; the gateway's own HTTP upstreams are asked for none.
  it.each(flavor.name === 'anthropic' ? [] : [false, true])('stream %s: the upstream is asked for no content coding, and an answer encoded all the same is a 502 saying so', async (stream) => {
    const calls = upstream.requests.length;
    upstream.setScript(() => ({ kind: 'json', body: { id: 'x' }, headers: { 'content-encoding': 'gzip' } }));
    const answer = await post({ input: 'x', stream });
    expect(upstream.requests[calls]!.headers['accept-encoding']).toBe('identity');
    expect(answer.status).toBe(502);
    const { error } = JSON.parse(answer.text);
    assertErrorEnvelope({ error });
    expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_invalid_response' });
    expect(error.message).toContain('gzip-encoded');
  });

  it('upstream 404 about the model: the client\'s 404 model_not_found, not logged as the gateway\'s fault', async () => {
    upstream.setScript(() => refusals[flavor.name].noSuchModel);
    const before = errorLines().length;
    const answer = await post({ input: 'x' });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text).error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(errorLines().length).toBe(before);
  });

  it('refused on a later turn of the loop: the response ends failed with upstream_auth_failed (JSON and stream), logged once', async () => {
    for (const stream of [false, true]) {
      let turn = 0;
      upstream.setScript((request) => (++turn === 1 ? flavor.render(request, { calls: [{ id: 'call_1', name: 'lookup', args: {} }] }) : refusals[flavor.name].auth[0]!.reply));
      const answer = await post({ input: 'x', stream, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] });
      expect(answer.status).toBe(200);
      const response = stream ? parseSseText(answer.text).events.at(-1)!.response : JSON.parse(answer.text);
      assertValidResponse(response);
      expect(response.status).toBe('failed');
      expect(response.error.code).toBe('upstream_auth_failed');
      // Said once for the gateway's whole log so far, answers between refusals or not.
      expect(errorLines().filter((line) => line.code === 'upstream_auth_failed')).toEqual([expect.objectContaining({ base_url: baseUrl, code: 'upstream_auth_failed' })]);
    }
  });
});
