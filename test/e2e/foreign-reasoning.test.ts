import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { flavors } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** Reasoning items the gateway did not produce — OpenAI's encrypted blobs (Codex resends them), or its own resent whole — are accepted by every provider, never a 400. */
describe.each(flavors)('reasoning items from elsewhere: $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => flavor.render(request, { text: 'fine' }));
    gateway = await startGateway(url, flavor.config(url));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('accepts them and sends the upstream only what it can use', async () => {
    const blob = 'gAAAAABopenai-encrypted-reasoning-blob';
    const response = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: flavor.model,
        include: ['reasoning.encrypted_content'],
        input: [
          { role: 'user', content: 'first' },
          { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'thinking it over' }], encrypted_content: blob, status: 'completed' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer', annotations: [] }] },
          { role: 'user', content: 'second' },
        ],
      }),
    });
    expect(response.status).toBe(200);
    // OpenAI's own blob is what OpenAI's Responses API continues from (Codex resends it for that); to any other upstream it means nothing.
    if (flavor.name === 'openai-responses') expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(blob);
    else expect(JSON.stringify(upstream.requests.at(-1)!.body)).not.toContain(blob);
    expect(flavor.seen(upstream.requests.at(-1)!)).toEqual([
      { kind: 'user', text: 'first' },
      { kind: 'assistant', text: 'answer' },
      { kind: 'user', text: 'second' },
    ]);
  });
});
