import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { RedisEventLog } from '../../src/store/redis-event-log.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { RedisResponseStore } from '../../src/store/redis-response-store.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { acquireRedis } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
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

/** A gateway on Redis whose responses go through `makeStore` (leases and events live in Redis, as the config makes them); stopped by `close`. */
async function gatewayWithStore<S extends RedisResponseStore>(makeStore: (options: ConstructorParameters<typeof RedisResponseStore>[0]) => S): Promise<{ store: S; origin: string; keyPrefix: string; close(): Promise<void> }> {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  const url = await upstream.start();
  const redis = await acquireRedis();
  const keyPrefix = redis.prefix();
  const config = GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: url, apiKey: 'k' } }, store: { redisUrl: redis.url, keyPrefix }, background: { leaseMs: 500 }, server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 200 } });
  const store = makeStore({ url: redis.url, clusterNodes: [], keyPrefix, ttlSeconds: 600, commandTimeoutMs: 1_000, connectTimeoutMs: 1_000 });
  const app = await buildApp({ config, store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    store,
    keyPrefix,
    origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    async close() {
      await app.close();
      await upstream.close();
      await redis.cleanup();
      await redis.stop();
    },
  };
}

/** README: "Background responses never stay running" — not even when the store refuses their last write. */
describe('a background response whose ending cannot be stored', () => {
  let gateway: Awaited<ReturnType<typeof gatewayWithStore<StoreAwayAtTheEnd>>>;
  let store: StoreAwayAtTheEnd;
  let origin: string;

  beforeAll(async () => {
    gateway = await gatewayWithStore((options) => new StoreAwayAtTheEnd(options));
    ({ store, origin } = gateway);
  });
  afterAll(() => gateway.close());

  // One failure: the replica stores the ending again as it lets the response go. Two: that fails too, and the reaper stores it, read from the event log.
  for (const failures of [1, 2]) {
    for (const stream of [false, true]) {
      it(`is stored with the ending its stream was sent, not left in_progress (${failures} failed writes, stream: ${stream})`, async () => {
        store.failures = failures;
        const created = await fetch(`${origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', background: true, stream }) });
        const id = stream ? /"id":"(resp_[^"]+)"/.exec(await created.text())![1]! : ((await created.json()) as { id: string }).id;
        let response: any = null;
        await waitFor(async () => {
          response = await (await fetch(`${origin}/v1/responses/${id}`)).json();
          return response.status !== 'queued' && response.status !== 'in_progress';
        }, 10_000);
        assertValidResponse(response);
        expect(store.failures).toBe(0);
        // Its stream ended with the terminal event; the stored response is that same ending, output and usage included (the upstream billed the call).
        const events = await (await fetch(`${origin}/v1/responses/${id}?stream=true&starting_after=0`)).text();
        const terminal = events.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6))).filter((event) => event.type === 'response.failed');
        expect(terminal).toHaveLength(1);
        expect(response).toMatchObject({ status: 'failed', error: { code: 'store_unavailable' } });
        expect(response.output).toHaveLength(1);
        expect(response.usage).not.toBeNull();
        expect(response).toEqual(terminal[0].response);
        // And so the replica let it go: no reaper rewrites it later.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        expect(await (await fetch(`${origin}/v1/responses/${id}`)).json()).toEqual(response);
      });
    }
  }
});

/**
 * A reaper on another replica that ended the response (its owner stalled past
 * the lease) just before the owner's own ending landed: the reaper stored
 * `failed` and sent `response.failed`; then the owner's `completed` write
 * went in over it, and its `response.completed` was refused by the log (one
 * terminal event only).
 */
class ReaperFirst extends RedisResponseStore {
  events: RedisEventLog | null = null;
  async #playReaper(record: StoredResponse): Promise<void> {
    const response = { ...record.response, status: 'failed' as const, completed_at: null, output: [], error: { code: 'response_owner_lost', message: 'The gateway instance running this response stopped.' } };
    await super.put({ ...record, response });
    const last = await this.events!.lastSequence(record.tenant, response.id);
    await this.events!.append(record.tenant, response.id, [{ sequence: last + 1, type: 'response.failed', json: JSON.stringify({ type: 'response.failed', response, sequence_number: last + 1 }) }]);
  }
  override async put(record: StoredResponse): Promise<void> {
    if (record.response.status === 'completed') await this.#playReaper(record);
    return super.put(record);
  }
}

describe('a background response a reaper ended just before its owner did', () => {
  let gateway: Awaited<ReturnType<typeof gatewayWithStore<ReaperFirst>>>;
  let origin: string;

  beforeAll(async () => {
    gateway = await gatewayWithStore((options) => new ReaperFirst(options));
    gateway.store.events = new RedisEventLog({ client: gateway.store.redis, keys: new RedisKeys(gateway.keyPrefix), limits: { maxEvents: 1_000, maxBytes: 1_000_000, ttlSeconds: 600 }, readyWaitMs: 1_000 });
    origin = gateway.origin;
  });
  afterAll(() => gateway.close());

  it("keeps the ending its stream was sent (the reaper's), not the owner's write that landed after it", async () => {
    const created = (await (await fetch(`${origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', background: true }) })).json()) as { id: string };
    const events = await (await fetch(`${origin}/v1/responses/${created.id}?stream=true&starting_after=0`)).text();
    const terminal = events.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6))).filter((event) => /^response\.(completed|failed|incomplete)$/.test(event.type));
    expect(terminal.map((event) => event.type)).toEqual(['response.failed']);
    let response: any = null;
    await waitFor(async () => {
      response = await (await fetch(`${origin}/v1/responses/${created.id}`)).json();
      return response.status === 'failed';
    }, 5_000);
    assertValidResponse(response);
    expect(response.error).toMatchObject({ code: 'response_owner_lost' });
    // And so it stays.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(((await (await fetch(`${origin}/v1/responses/${created.id}`)).json()) as any).status).toBe('failed');
  });
});

/**
 * A finished response whose log lost its terminal event (the append after the
 * final write failed, or the log was cut): resumed after the last event kept,
 * there is nothing whole to give, and the client is told so rather than
 * handed an empty stream that passes for whole.
 */
describe("a finished background response whose log lacks its terminal event", () => {
  let gateway: Awaited<ReturnType<typeof gatewayWithStore<RedisResponseStore>>>;

  beforeAll(async () => {
    gateway = await gatewayWithStore((options) => new RedisResponseStore(options));
  });
  afterAll(() => gateway.close());

  it('is a 400 stream_events_expired when resumed after the last event kept; with the terminal event it would be empty and whole', async () => {
    const { origin, store, keyPrefix } = gateway;
    const created = (await (await fetch(`${origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', background: true }) })).json()) as { id: string };
    await waitFor(async () => ((await (await fetch(`${origin}/v1/responses/${created.id}`)).json()) as { status: string }).status === 'completed', 5_000);
    const key = new RedisKeys(keyPrefix).events('default', created.id);
    const [terminalId, terminalFields] = ((await store.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][])[0]!;
    const terminalSequence = Number(terminalId.split('-')[0]);
    expect(terminalFields).toContain('response.completed');
    const whole = await fetch(`${origin}/v1/responses/${created.id}?stream=true&starting_after=${terminalSequence}`);
    expect([whole.status, await whole.text()]).toEqual([200, 'data: [DONE]\n\n']);

    await store.redis.xdel(key, terminalId);
    const cut = await fetch(`${origin}/v1/responses/${created.id}?stream=true&starting_after=${terminalSequence - 1}`);
    expect(cut.status).toBe(400);
    const refusal = (await cut.json()) as unknown;
    assertErrorEnvelope(refusal);
    expect(refusal.error.code).toBe('stream_events_expired');
    // No later starting_after would do better: no parameter is blamed.
    expect(refusal.error.param).toBeNull();
  });
});
