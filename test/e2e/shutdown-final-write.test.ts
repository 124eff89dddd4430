import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { storeUnavailable } from '../../src/store/response-store.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** A store that refuses every write of a finished response, as one away at the moment the drain ends the responses still running. */
class RefusingFinalWrites extends MemoryResponseStore {
  override async put(record: StoredResponse): Promise<void> {
    if (record.response.status !== 'queued' && record.response.status !== 'in_progress') throw storeUnavailable(new Error('away'));
    return super.put(record);
  }
}

/** README (store faults): "a JSON request gets the 503" when its final write fails — at shutdown too, where the drain ends what still runs. */
describe('a JSON request whose final write fails as the shutdown ends it', () => {
  const upstream = new ScriptedChatUpstream(() => ({ kind: 'sse', pauseMs: 100, pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 30 }, (_, index) => chunk({ content: `w${index} ` })), chunk({}, 'stop'), usageChunk(5, 30)]) }));
  let app: Awaited<ReturnType<typeof buildApp>>;
  let origin: string;

  beforeAll(async () => {
    const url = await upstream.start();
    const config = GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: url, apiKey: 'k' } }, server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 200 } });
    app = await buildApp({ config, store: new RefusingFinalWrites({ maxEntries: 100, ttlSeconds: 600 }) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('gets the 503 store_unavailable, not a 200 with a failed response (the client is still there)', async () => {
    const answer = fetch(`${origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'slow' }) });
    await waitFor(() => upstream.requests.length > 0, 5_000, 20);
    const closing = app.close();
    const response = await answer;
    await closing;
    expect(response.status).toBe(503);
    expect(((await response.json()) as any).error).toMatchObject({ type: 'server_error', code: 'store_unavailable' });
  });
});
