import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiChat, openaiResponses, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** Azure OpenAI: the key goes in an `api-key` header, never as a bearer token, and dated APIs take `api-version` in the query. */
describe.each([openaiChat, openaiResponses] as ProviderFlavor[])('Azure OpenAI endpoints over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let baseUrl = '';

  beforeAll(async () => {
    // The upstream's origin: Azure's paths begin `/openai/v1`.
    baseUrl = new URL(await upstream.start()).origin;
    upstream.setScript((request) => flavor.render(request, { text: 'from azure' }));
  });
  afterAll(() => upstream.close());

  async function ask(provider: Record<string, unknown>, stream: boolean) {
    const gateway = await startGateway(baseUrl, { providers: { azure: { type: flavor.name, baseUrl: `${baseUrl}/openai/v1`, apiKey: 'azure-key', ...provider } }, defaultProvider: 'azure' });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      upstream.requests.length = 0;
      if (stream) {
        const events: any[] = [];
        for await (const event of await client.responses.create({ model: 'gpt-azure', input: 'hi', stream: true })) events.push(event);
        assertEventStreamInvariants(events);
        expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('')).toBe('from azure');
      } else {
        const response = await client.responses.create({ model: 'gpt-azure', input: 'hi' });
        assertValidResponse(response);
        expect(response.output_text).toBe('from azure');
      }
      return upstream.requests[0]!;
    } finally {
      await gateway.close();
    }
  }

  it.each([false, true])('sends the key as api-key with the api-version query (stream %s)', async (stream) => {
    const seen = await ask({ auth: 'api-key', apiVersion: '2025-04-01-preview', queryParams: { deployment: 'east' } }, stream);
    expect(seen.headers['api-key']).toBe('azure-key');
    expect(seen.headers.authorization).toBeUndefined();
    const url = new URL(seen.path, 'http://upstream');
    expect(url.pathname).toBe(flavor.name === 'openai-chat' ? '/openai/v1/chat/completions' : '/openai/v1/responses');
    expect(Object.fromEntries(url.searchParams)).toEqual({ 'api-version': '2025-04-01-preview', deployment: 'east' });
  });

  it('takes the v1 API without api-version', async () => {
    const seen = await ask({ auth: 'api-key' }, false);
    expect(seen.headers['api-key']).toBe('azure-key');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.path).not.toContain('?');
  });

  it('keeps bearer auth by default', async () => {
    const seen = await ask({}, false);
    expect(seen.headers.authorization).toBe('Bearer azure-key');
    expect(seen.headers['api-key']).toBeUndefined();
  });
});
