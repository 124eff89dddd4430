import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { ScriptedChatUpstream, textReply, type RecordedRequest } from '../support/scripted-chat-upstream.ts';

/** A store that refuses every finished response's write, as Redis away at that moment does. */
class StoreAwayAtTheEnd extends MemoryResponseStore {
  override async put(record: StoredResponse): Promise<void> {
    if (record.response.status !== 'queued' && record.response.status !== 'in_progress') {
      throw new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The response store is unavailable.', headers: { 'retry-after': '1' } });
    }
    return super.put(record);
  }
}

/**
 * A JSON request whose response cannot be kept is a 503 (README: a client
 * never sees `completed` for something it cannot fetch) — but once the
 * gateway ran tools for it, a retry would run them again: the 503 then says
 * not to retry, and the SDKs' automatic retries do not resend it.
 */
describe('a response that could not be kept after its tools ran', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let app: Awaited<ReturnType<typeof buildApp>>;
  let client: OpenAI;

  beforeAll(async () => {
    const [url, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    const config = GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: url, apiKey: 'k' } }, mcp: { servers: [{ name: 'calc', url: mcpUrl }] }, server: { host: '127.0.0.1', port: 0 } });
    app = await buildApp({ config, store: new StoreAwayAtTheEnd({ maxEntries: 100, ttlSeconds: 60 }) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    // The SDK's own retries, as every user has them (2).
    client = new OpenAI({ baseURL: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`, apiKey: 'k' });
  });
  afterAll(async () => {
    await app.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('the tool ran: a 503 with x-should-retry false, which the openai SDK does not retry; the tool ran once', async () => {
    const answered = textReply('7');
    upstream.setScript((request: RecordedRequest) =>
      request.body.messages.some((message: { role: string }) => message.role === 'tool')
        ? answered(request)
        : {
            kind: 'json',
            body: {
              id: 'chatcmpl-1',
              object: 'chat.completion',
              created: 0,
              model: 'upstream-model',
              choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calc__add', arguments: '{"a":2,"b":5}' } }] }, finish_reason: 'tool_calls' }],
              usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
            },
          },
    );
    const before = upstream.requests.length;
    const refused = await client.responses.create({ model: 'm', input: '2 + 5?' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const error = refused as InstanceType<typeof OpenAI.APIError>;
    expect(error.status, error.message).toBe(503);
    expect(error.code).toBe('store_unavailable');
    expect(error.message).toContain('sending the request again runs them again');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(error.headers?.get('retry-after')).toBeNull();
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 2, b: 5 } }]);
    expect(upstream.requests.length - before).toBe(2);
  });

  it('no tool ran: the 503 keeps its retry-after, and the SDK retries it as before', async () => {
    upstream.setScript(textReply('hi'));
    const before = upstream.requests.length;
    const refused = await client.responses.create({ model: 'm', input: 'hi' }, { maxRetries: 1 }).then(
      () => null,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
    expect(refused?.status).toBe(503);
    expect(refused?.headers?.get('retry-after')).toBe('1');
    expect(upstream.requests.length - before).toBe(2);
  });
});
