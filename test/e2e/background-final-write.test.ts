import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** The Redis store, but refusing the next `failures` writes of a finished response, as a store briefly away does (a failover, a slot moving). */
class StoreAwayAtTheEnd extends RedisResponseStore {
  failures = 0;
  override async put(record: StoredResponse): Promise<void> {
    const finished = record.response.status !== 'queued' && record.response.status !== 'in_progress';
    if (finished && this.failures > 0) {
      this.failures--;
      throw new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The response store is unavailable.' });
    }
    return super.put(record);
  }
}

/** README: "Background responses never stay running" — not even when the store refuses their last write. */
describe('a background response whose ending cannot be stored', () => {
  const upstream = new ScriptedChatUpstream();
  let redis: TestRedis;
  let store: StoreAwayAtTheEnd;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let origin: string;

  beforeAll(async () => {
    const url = await upstream.start();
    redis = await acquireRedis();
    const keyPrefix = redis.prefix();
    // Leases live in Redis (the registry the config makes); the responses in the store that refuses.
    const config = GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: url, apiKey: 'k' } }, store: { redisUrl: redis.url, keyPrefix }, background: { leaseMs: 500 }, server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 200 } });
    store = new StoreAwayAtTheEnd({ url: redis.url, clusterNodes: [], keyPrefix, ttlSeconds: 600, commandTimeoutMs: 1_000, connectTimeoutMs: 1_000 });
    app = await buildApp({ config, store });
    await app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
    await redis.cleanup();
    await redis.stop();
  });

  for (const stream of [false, true]) {
    it(`ends failed once its lease lapses, rather than staying in_progress for good (stream: ${stream})`, async () => {
      store.failures = 1;
      const created = await fetch(`${origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', background: true, stream }) });
      const id = stream ? /"id":"(resp_[^"]+)"/.exec(await created.text())![1]! : ((await created.json()) as { id: string }).id;
      let response: any = null;
      await waitFor(async () => {
        response = await (await fetch(`${origin}/v1/responses/${id}`)).json();
        return response.status !== 'queued' && response.status !== 'in_progress';
      }, 10_000);
      assertValidResponse(response);
      expect(response).toMatchObject({ status: 'failed', error: { code: 'response_owner_lost' } });
      expect(store.failures).toBe(0);
      // Its stream ends with the terminal event too, for readers resuming it.
      const events = await (await fetch(`${origin}/v1/responses/${id}?stream=true&starting_after=0`)).text();
      expect(events).toContain('"type":"response.failed"');
    });
  }
});
