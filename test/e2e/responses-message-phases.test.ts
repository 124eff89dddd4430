import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiResponses } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * An OpenAI Responses upstream answering with several messages (gpt-5.x-codex:
 * a `commentary` message, then the `final_answer`): each reaches the client
 * as its own message with its phase, and phases and annotations go back up
 * as they came.
 */
const commentary = { id: 'msg_c', type: 'message', role: 'assistant', status: 'completed', phase: 'commentary', content: [{ type: 'output_text', text: 'Checking the files.', annotations: [] }] };
const citation = { type: 'url_citation', url: 'https://example.com/doc', title: 'Doc', start_index: 0, end_index: 9 };
const finalAnswer = { id: 'msg_f', type: 'message', role: 'assistant', status: 'completed', phase: 'final_answer', content: [{ type: 'output_text', text: 'All done.', annotations: [citation] }] };
const body = (status: string, output: unknown[]) => ({ id: 'resp_up', object: 'response', created_at: 0, status, model: 'gpt-5', output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, error: null });
const sse = (events: Record<string, unknown>[]): UpstreamReply => ({ kind: 'sse', pieces: events.map((event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`) });

describe('several messages from an OpenAI Responses upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const post = async (request: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiResponses.model, ...request }) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${response.status}: ${text}`);
    return request.stream ? parseSseText(text).events.at(-1)!.response : JSON.parse(text);
  };

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, openaiResponses.config(url));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it.each([
    { how: 'whole', stream: false, reply: (): UpstreamReply => ({ kind: 'json', body: body('completed', [commentary, finalAnswer]) }) },
    {
      how: 'streamed',
      stream: true,
      reply: () =>
        sse([
          { type: 'response.created', response: body('in_progress', []) },
          ...[commentary, finalAnswer].flatMap((message, index) => [
            { type: 'response.output_item.added', output_index: index, item: { ...message, status: 'in_progress', content: [] } },
            { type: 'response.output_text.delta', item_id: message.id, output_index: index, content_index: 0, delta: message.content[0]!.text },
            { type: 'response.output_item.done', output_index: index, item: message },
          ]),
          { type: 'response.completed', response: body('completed', [commentary, finalAnswer]) },
        ]),
    },
  ])('each is its own message with its phase ($how), not one run-together text', async ({ stream, reply }) => {
    upstream.setScript(reply);
    const response = await post({ input: 'fix it', stream });
    assertValidResponse(response);
    expect(response.output.map((item: any) => [item.type, item.phase, item.content[0].text])).toEqual([
      ['message', 'commentary', 'Checking the files.'],
      ['message', 'final_answer', 'All done.'],
    ]);
    expect(response.output[1].content[0].annotations).toEqual([citation]);
  });

  it('phases and annotations go back up as they came: by previous_response_id, and resent whole (phase null is no phase)', async () => {
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [commentary, finalAnswer]) }));
    const first = await post({ input: 'fix it' });
    await post({ previous_response_id: first.id, input: 'thanks' });
    const sentBack = (upstream.requests.at(-1)!.body as any).input.filter((item: any) => item.role === 'assistant');
    expect(sentBack).toEqual([
      { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Checking the files.', annotations: [] }] },
      { type: 'message', role: 'assistant', phase: 'final_answer', content: [{ type: 'output_text', text: 'All done.', annotations: [citation] }] },
    ]);

    await post({
      store: false,
      input: [
        { role: 'user', content: 'fix it' },
        { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Checking the files.', annotations: [] }] },
        { type: 'message', role: 'assistant', phase: null, content: [{ type: 'output_text', text: 'All done.', annotations: [citation] }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect((upstream.requests.at(-1)!.body as any).input.filter((item: any) => item.role === 'assistant')).toEqual([
      { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Checking the files.', annotations: [] }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'All done.', annotations: [citation] }] },
    ]);
  });
});
