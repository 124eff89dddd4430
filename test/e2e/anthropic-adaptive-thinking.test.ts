import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { anthropic } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const event = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

/** A thinking block, then the answer: what Claude streams with thinking on. */
function thoughtThenAnswer(model: string): UpstreamReply {
  return {
    kind: 'sse',
    pieces: [
      event('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model, stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
      event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Paris, surely.' } }),
      event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } }),
      event('content_block_stop', { index: 0 }),
      event('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      event('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Paris.' } }),
      event('content_block_stop', { index: 1 }),
      event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
      event('message_stop', {}),
    ],
  };
}

/** Anthropic's own refusal of a budget on a model that thinks only adaptively (Opus 4.7 and later). */
function refusesBudget(request: RecordedRequest): UpstreamReply | null {
  if (request.body.thinking?.type !== 'enabled') return null;
  return { kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.' } } };
}

/**
 * Claude models from 4.6 on think adaptively, and from Opus 4.7 on only so:
 * a `budget_tokens` is Anthropic's 400. The gateway asks the Models API how
 * each model takes thinking, once, and sends what it takes.
 */
describe('Claude thinking as each model takes it', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let client: OpenAI;
  const adaptiveOnly = (id: string) => ({
    type: 'model',
    id,
    display_name: id,
    created_at: '2026-04-16T00:00:00Z',
    max_tokens: 128_000,
    capabilities: {
      thinking: { supported: true, types: { adaptive: { supported: true }, enabled: { supported: false }, disabled: { supported: true }, between_tools: { supported: false } } },
      effort: { supported: true, low: { supported: true }, medium: { supported: true }, high: { supported: true }, xhigh: { supported: true }, max: { supported: true } },
    },
  });

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.modelInfos.set('claude-opus-4-7', adaptiveOnly('claude-opus-4-7'));
    upstream.setScript((request) => refusesBudget(request) ?? thoughtThenAnswer(request.body.model));
    gateway = await startGateway(url, anthropic.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('a model the Models API says thinks adaptively gets thinking {type: adaptive} and the effort asked for, asked of the API once', async () => {
    for (const stream of [false, true]) {
      const request = { model: 'claude-opus-4-7', input: 'Capital of France?', reasoning: { effort: 'xhigh' as const, summary: 'auto' as const } };
      const response = stream ? await client.responses.stream(request).finalResponse() : await client.responses.create(request);
      assertValidResponse(response);
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('Paris.');
      const reasoning = response.output.find((item) => item.type === 'reasoning') as OpenAI.Responses.ResponseReasoningItem;
      expect(reasoning.summary.map((part) => part.text).join('')).toBe('Paris, surely.');
      expect(upstream.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'xhigh' } });
      expect(upstream.requests.at(-1)!.body.max_tokens).toBeGreaterThan(32_000);
    }
    expect(upstream.modelLookups.filter((model) => model === 'claude-opus-4-7')).toHaveLength(1);
  });

  it("a model the Models API does not know is judged by its name: Claude 4.6 and later adaptively, older ones with a budget; a call without reasoning asks nothing", async () => {
    const before = upstream.modelLookups.length;
    await client.responses.create({ model: 'claude-sonnet-4-6', input: 'hi' });
    expect(upstream.modelLookups).toHaveLength(before);
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty('thinking');

    const modern = await client.responses.create({ model: 'claude-sonnet-4-6', input: 'hi', reasoning: { effort: 'low' } });
    assertValidResponse(modern);
    expect(modern.status).toBe('completed');
    expect(upstream.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });

    upstream.setScript((request) => thoughtThenAnswer(request.body.model));
    const older = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'hi', reasoning: { effort: 'low' } });
    assertValidResponse(older);
    expect(upstream.requests.at(-1)!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty('output_config');
  });
});
