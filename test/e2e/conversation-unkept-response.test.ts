import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { parseSseText } from '../support/event-invariants.ts';
import { assertValidEvent } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** A store whose finished-response writes fail while `away` is set, as a Redis paused or failing over then does. */
class StoreAwayAtTheEnd extends MemoryResponseStore {
  away = false;
  override async put(record: StoredResponse): Promise<void> {
    if (this.away) throw new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The response store is unavailable.', headers: { 'retry-after': '1' } });
    return super.put(record);
  }
}

/**
 * A response in a Conversation holds it while it runs (409 for any other).
 * When its final write fails it ends `failed`, which adds nothing to the
 * conversation — and must let go of it: the hold was renewed for good, and
 * every later response there was a 409 on every replica until a restart.
 */
describe('a Conversation whose response could not be kept', () => {
  const upstream = new ScriptedChatUpstream();
  const store = new StoreAwayAtTheEnd({ maxEntries: 100, ttlSeconds: 60 });
  let app: Awaited<ReturnType<typeof buildApp>>;
  let client: OpenAI;
  let baseURL: string;

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript(textReply('ok'));
    const config = GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: url, apiKey: 'k' } }, server: { host: '127.0.0.1', port: 0 } });
    app = await buildApp({ config, store });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseURL = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
    client = new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it.each([false, true])('stream %s: the failed response releases the conversation at once, adding nothing; the next response there runs', async (stream) => {
    const conversation = await client.conversations.create({ items: [{ role: 'user', content: 'Earlier.' }] });
    store.away = true;
    const refused = await fetch(`${baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', conversation: conversation.id, input: 'Lost turn.', stream }) });
    if (stream) {
      expect(refused.status).toBe(200);
      const { events } = parseSseText(await refused.text());
      for (const event of events) assertValidEvent(event);
      expect(events.at(-1)).toMatchObject({ type: 'response.failed', response: { error: { code: 'store_unavailable' } } });
    } else {
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    }
    store.away = false;

    const next = await client.responses.create({ model: 'm', conversation: conversation.id, input: 'Next turn.' });
    expect(next.status).toBe('completed');
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    const texts = items.data.map((item) => (item.type === 'message' ? item.content.map((part) => ('text' in part ? part.text : '')).join('') : item.type));
    expect(texts).toEqual(['Earlier.', 'Next turn.', 'ok']);
  });
});
