import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { anthropic, gemini } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const anthropicEvent = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const messageStart = (input: number) => anthropicEvent('message_start', { message: { id: 'msg_t', type: 'message', role: 'assistant', content: [], model: 'claude-test', stop_reason: null, usage: { input_tokens: input, output_tokens: 1 } } });
/** Anthropic's stream up to a tool_use whose input is cut, then the connection lost. */
const anthropicBrokenCall = (input: number): UpstreamReply => ({
  kind: 'sse',
  pieces: [messageStart(input), anthropicEvent('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }), anthropicEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"id":' } })],
  pauseMs: 30,
  destroyAfter: true,
});

const geminiChunk = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/**
 * What the upstream reported it spent on a turn that then broke off is
 * charged all the same: the response's usage, the token metrics and the
 * tenant's usage (and so its token limits) count it.
 */
describe('usage of a model call that broke off', () => {
  const upstream = new ScriptedChatUpstream();
  let upstreamUrl: string;
  beforeAll(async () => {
    upstreamUrl = await upstream.start();
  });
  afterAll(() => upstream.close());

  async function failedResponse(gateway: RunningGateway, model: string): Promise<any> {
    const reply = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify({ model, input: 'go', stream: true, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] }),
    });
    const final = assertEventStreamInvariants(parseSseText(await reply.text()).events);
    expect(final.status).toBe('failed');
    return final;
  }

  it("Anthropic: the input tokens its message_start reported, and a whole message before a pause_turn continuation broke", async () => {
    const gateway = await startGateway(upstreamUrl, anthropic.config(upstreamUrl));
    try {
      upstream.setScript(() => anthropicBrokenCall(300));
      expect((await failedResponse(gateway, anthropic.model)).usage).toMatchObject({ input_tokens: 300, output_tokens: 1 });

      let calls = 0;
      const paused: UpstreamReply = {
        kind: 'sse',
        pieces: [
          messageStart(1_000),
          anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Searching.' } }),
          anthropicEvent('content_block_stop', { index: 0 }),
          anthropicEvent('message_delta', { delta: { stop_reason: 'pause_turn' }, usage: { output_tokens: 50 } }),
          anthropicEvent('message_stop', {}),
        ],
      };
      upstream.setScript(() => (++calls === 1 ? paused : anthropicBrokenCall(1_050)));
      expect((await failedResponse(gateway, anthropic.model)).usage).toMatchObject({ input_tokens: 2_050, output_tokens: 51 });
      const usage = (await (await fetch(`${gateway.baseURL}/usage`, { headers: { authorization: 'Bearer k' } })).json()) as { data: { input_tokens: number }[] };
      expect(usage.data.reduce((sum, entry) => sum + entry.input_tokens, 0)).toBe(2_350);
    } finally {
      await gateway.close();
    }
  });

  it('Gemini: the usage its last chunk before the break reported', async () => {
    const gateway = await startGateway(upstreamUrl, gemini.config(upstreamUrl));
    try {
      const chunk = { candidates: [{ content: { role: 'model', parts: [{ text: 'Looking' }] }, index: 0 }], usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 3, totalTokenCount: 123 }, modelVersion: 'gemini-test-001' };
      upstream.setScript(() => ({ kind: 'sse', pieces: [geminiChunk(chunk)], pauseMs: 30, destroyAfter: true }));
      expect((await failedResponse(gateway, gemini.model)).usage).toMatchObject({ input_tokens: 120, output_tokens: 3 });
    } finally {
      await gateway.close();
    }
  });
});
