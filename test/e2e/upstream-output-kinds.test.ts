import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { openaiChat, openaiResponses } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** What upstreams answer beyond text and function calls: nothing of it is lost without a word. */
describe('upstream output beyond text and function calls', () => {
  const chat = new ScriptedChatUpstream();
  const responses = new ScriptedChatUpstream();
  let overChat: RunningGateway;
  let overResponses: RunningGateway;
  const post = async (gateway: RunningGateway, model: string, request: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, ...request }) });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return request.stream ? parseSseText(text).events.at(-1)!.response : JSON.parse(text);
  };
  const citation = { type: 'url_citation', url_citation: { url: 'https://example.com/a', title: 'A', start_index: 0, end_index: 5 } };
  const chatBody = (message: Record<string, unknown>, finish: string) => ({ id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 3, completion_tokens: 2 } });

  beforeAll(async () => {
    const [chatUrl, responsesUrl] = await Promise.all([chat.start(), responses.start()]);
    overChat = await startGateway(chatUrl, openaiChat.config(chatUrl));
    overResponses = await startGateway(responsesUrl, openaiResponses.config(responsesUrl));
  });
  afterAll(async () => {
    await Promise.all([overChat.close(), overResponses.close()]);
    await Promise.all([chat.close(), responses.close()]);
  });

  it("a Chat Completions answer's citations (message.annotations, or a chunk's delta) reach the client on its text", async () => {
    chat.setScript(() => ({ kind: 'json', body: chatBody({ content: 'Hello world', annotations: [citation] }, 'stop') }));
    const whole = await post(overChat, openaiChat.model, { input: 'search' });
    assertValidResponse(whole);
    const expected = [{ type: 'url_citation', url: 'https://example.com/a', title: 'A', start_index: 0, end_index: 5 }];
    expect(whole.output[0].content[0].annotations).toEqual(expected);

    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    chat.setScript(() => ({ kind: 'sse', pieces: [chunk({ role: 'assistant', content: 'Hello' }), chunk({ content: ' world' }), chunk({ annotations: [citation] }, 'stop'), 'data: [DONE]\n\n'] }));
    const streamed = await post(overChat, openaiChat.model, { input: 'search', stream: true });
    assertValidResponse(streamed);
    expect(streamed.output[0].content[0].annotations).toEqual(expected);
  });

  it('a Chat Completions freeform call (type custom, its raw input) is the client\'s custom_tool_call', async () => {
    chat.setScript(() => ({ kind: 'json', body: chatBody({ content: null, tool_calls: [{ id: 'call_c', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' } }] }, 'tool_calls') }));
    const paused = await post(overChat, openaiChat.model, { input: 'patch', tools: [{ type: 'custom', name: 'apply_patch', description: 'Edits.' }] });
    assertValidResponseWithOpenAIItems(paused);
    expect(paused.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_c', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' })]);
  });

  it('a streamed Chat Completions freeform call whose raw input comes in pieces is one custom_tool_call with the whole input', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const piece = (input: string, first = false) => chunk({ tool_calls: [{ index: 0, ...(first && { id: 'call_s', type: 'custom' }), custom: { ...(first && { name: 'apply_patch' }), input } }] });
    const input = '*** Begin Patch\n*** Add File: "a.txt"\n+hi\n*** End Patch';
    chat.setScript(() => ({ kind: 'sse', pieces: [chunk({ role: 'assistant', content: null }), piece(input.slice(0, 16), true), piece(input.slice(16, 40)), piece(input.slice(40)), chunk({}, 'tool_calls'), 'data: [DONE]\n\n'] }));
    const response = await fetch(`${overChat.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiChat.model, input: 'patch', stream: true, tools: [{ type: 'custom', name: 'apply_patch', description: 'Edits.' }] }) });
    const { events } = parseSseText(await response.text());
    const paused = events.at(-1)!.response;
    assertValidResponseWithOpenAIItems(paused);
    expect(paused.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_s', name: 'apply_patch', input })]);
    // Added whole once its input is: OpenAI's custom_tool_call_input events are not in the OpenResponses schema.
    expect(events.filter((event: any) => event.type === 'response.output_item.done').map((event: any) => event.item.input)).toEqual([input]);
  });

  it('a Responses answer made only of items the gateway cannot pass on fails naming them; beside an answer they do not hide it', async () => {
    const body = (output: unknown[]) => ({ id: 'resp_1', object: 'response', created_at: 0, status: 'completed', model: 'gpt-5', output, usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 }, error: null });
    const unknown = { id: 'cu_1', type: 'computer_call', call_id: 'call_cu', action: { type: 'screenshot' }, pending_safety_checks: [], status: 'completed' };
    responses.setScript((): UpstreamReply => ({ kind: 'json', body: body([unknown]) }));
    const raw = await fetch(`${overResponses.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiResponses.model, input: 'look' }) });
    const answer = (await raw.json()) as any;
    // As an unknown finish that left no answer: the response fails, stored, rather than completing empty.
    expect(answer).toMatchObject({ status: 'failed', output: [], error: { code: 'upstream_no_answer', message: expect.stringContaining('computer_call') } });
    assertValidResponse(answer);

    const message = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Here it is.', annotations: [] }] };
    responses.setScript((): UpstreamReply => ({ kind: 'json', body: body([unknown, message]) }));
    const answered = await post(overResponses, openaiResponses.model, { input: 'look' });
    assertValidResponse(answered);
    expect(answered.status).toBe('completed');
    expect(answered.output.map((item: any) => item.type)).toEqual(['message']);
  });
});
