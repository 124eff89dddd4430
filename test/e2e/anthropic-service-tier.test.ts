import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { anthropic } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** Claude answering as Anthropic does: `usage.service_tier` says where it served the message — priority capacity when asked for `auto`. */
function servedAtTier(request: RecordedRequest): UpstreamReply {
  const reply = anthropic.render(request, { text: 'ok' });
  if (reply.kind !== 'sse') throw new Error('the Anthropic flavor streams');
  const served = request.body.service_tier === 'auto' ? 'priority' : 'standard';
  return { ...reply, pieces: reply.pieces.map((piece) => (piece.startsWith('event: message_start') ? piece.replace('"usage":{', `"usage":{"service_tier":"${served}",`) : piece)) };
}

/** README: `service_tier` is passed to upstreams that take them, and the response reports the tier the upstream served the call at. */
describe('service_tier on Claude', () => {
  const upstream = new ScriptedChatUpstream(servedAtTier);
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, anthropic.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const cases = [
    ['priority', 'auto', 'priority'],
    ['auto', 'auto', 'priority'],
    ['scale', 'auto', 'priority'],
    ['default', 'standard_only', 'default'],
    ['flex', 'standard_only', 'default'],
  ] as const;
  for (const [asked, sent, reported] of cases) {
    it(`${asked}: sent as Anthropic's ${sent}; the response says the tier Claude served at (${reported}), JSON and streamed`, async () => {
      const json = await client.responses.create({ model: anthropic.model, input: 'x', service_tier: asked });
      assertValidResponse(json);
      expect(upstream.requests.at(-1)!.body.service_tier).toBe(sent);
      expect(json.service_tier).toBe(reported);
      const events: any[] = [];
      for await (const event of await client.responses.create({ model: anthropic.model, input: 'x', service_tier: asked, stream: true })) events.push(event);
      expect(assertEventStreamInvariants(events).service_tier).toBe(reported);
    });
  }

  it('not asked for: nothing sent; the response still says the tier served at', async () => {
    const json = await client.responses.create({ model: anthropic.model, input: 'x' });
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty('service_tier');
    expect(json.service_tier).toBe('default');
  });
});
