import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textCompletion } from '../support/scripted-chat-upstream.ts';

/**
 * The memory store bounded by bytes (`store.maxBytes`), not only by count:
 * a handful of large responses (agents resend long histories) must not hold
 * the process's memory without end. The least recently used goes first; a
 * client reaching it gets the store's ordinary 404s.
 */
describe('memory store: store.maxBytes', () => {
  const upstream = new ScriptedChatUpstream(() => textCompletion('noted'));
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { store: { maxBytes: 1_500_000 } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('lets the least recently used large responses go once their JSON passes the bound, and serves the rest', async () => {
    const large = (mark: string) => `${mark} ${'a'.repeat(600_000)}`;
    const first = await client.responses.create({ model: 'm', input: large('first') });
    const second = await client.responses.create({ model: 'm', input: large('second') });
    // Read again, the first is now the more recently used of the two.
    await client.responses.retrieve(first.id);
    const third = await client.responses.create({ model: 'm', input: large('third') });

    await expect(client.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model: 'm', input: 'and?', previous_response_id: second.id })).rejects.toMatchObject({ status: 404, code: 'previous_response_not_found' });
    for (const kept of [first, third]) assertValidResponse(await client.responses.retrieve(kept.id));
    const items = await client.responses.inputItems.list(third.id);
    expect(JSON.stringify(items.data)).toContain('third a');

    // Small responses fit beside them without pushing anything out.
    const small = await client.responses.create({ model: 'm', input: 'short', previous_response_id: third.id });
    expect(small.status).toBe('completed');
    assertValidResponse(await client.responses.retrieve(first.id));
  });
});
