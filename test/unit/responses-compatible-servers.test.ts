import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { OpenAIResponsesProvider } from '../../src/providers/openai-responses/openai-responses-provider.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { collectLoopEvents } from '../support/turn-helpers.ts';
import { turnRequest } from '../support/turn-request.ts';

type Event = Record<string, unknown>;
const frames = (events: Event[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`);
const body = (id: string, status: string, output: unknown[]) => ({ id, object: 'response', created_at: 1, status, model: 'm', output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });

/**
 * Servers other than OpenAI that serve `POST /v1/responses`, each as it
 * names (or does not name) its items and tells of its errors: one upstream
 * item must be one item for the client, its text and arguments said once,
 * and an error must end the response as one, whatever its `code` holds.
 */
describe('Responses API servers other than OpenAI', () => {
  const upstream = new ScriptedChatUpstream();
  let provider: OpenAIResponsesProvider;

  beforeAll(async () => {
    provider = new OpenAIResponsesProvider({ name: 'compat', baseUrl: await upstream.start(), apiKey: null, upstreamStore: false, encryptedReasoning: false, nativeCustomTools: false, connections: 4, connectTimeoutMs: 5_000, firstByteTimeoutMs: 5_000, idleTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });

  async function run(events: Event[]) {
    upstream.setScript(() => ({ kind: 'sse', pieces: frames(events) }));
    const signal = new AbortController().signal;
    const streamed = await collectLoopEvents(await provider.startTurn(turnRequest({ model: 'm', stream: true }), signal), { model: 'm' }, signal);
    return { events: streamed, response: assertEventStreamInvariants(streamed) };
  }

  it("llama.cpp: a call without an id (its deltas name its call_id) is one call, its arguments said once, though done and completed repeat it", async () => {
    const done = { type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'fc_abc123', name: 'get_weather' };
    const { events, response } = await run([
      { type: 'response.created', response: body('resp_l', 'in_progress', []) },
      { type: 'response.output_item.added', item: { ...done, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', delta: '{"city":', item_id: 'fc_abc123' },
      { type: 'response.function_call_arguments.delta', delta: '"Paris"}', item_id: 'fc_abc123' },
      { type: 'response.output_item.done', item: done },
      { type: 'response.completed', response: body('resp_l', 'completed', [done]) },
    ]);
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'fc_abc123', arguments: '{"city":"Paris"}', status: 'completed' })]);
    expect(events.filter((event) => event.type === 'response.output_item.added')).toHaveLength(1);
  });

  it('a message without any id, its deltas placed by output_index: said once', async () => {
    const message = { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'No ids here.', annotations: [] }] };
    const { response } = await run([
      { type: 'response.created', response: body('resp_n', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: '', delta: 'No ids here.' },
      { type: 'response.output_item.done', output_index: 0, item: message },
      { type: 'response.completed', response: body('resp_n', 'completed', [message]) },
    ]);
    expect(response.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: 'No ids here.' })] })]);
  });

  it('mistral.rs: one message under another id in each event is still one message', async () => {
    const content = [{ type: 'output_text', text: 'Hello there.', annotations: [] }];
    const { response } = await run([
      { type: 'response.created', response: body('resp_m', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_A', type: 'message', role: 'assistant', status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_A', output_index: 0, content_index: 0, delta: 'Hello ' },
      { type: 'response.output_text.delta', item_id: 'msg_A', output_index: 0, content_index: 0, delta: 'there.' },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'msg_B', type: 'message', role: 'assistant', status: 'completed', content } },
      { type: 'response.completed', response: body('resp_m', 'completed', [{ id: 'msg_C', type: 'message', role: 'assistant', status: 'completed', content }]) },
    ]);
    expect(response.output).toHaveLength(1);
    expect(response.output[0].content[0].text).toBe('Hello there.');
  });

  it("vLLM: the terminal response's copy of a streamed call under a new id and call_id is not another call", async () => {
    const streamedCall = { id: 'fc_111', type: 'function_call', call_id: 'call_111', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };
    const { response } = await run([
      { type: 'response.created', sequence_number: 0, response: body('resp_v', 'in_progress', []) },
      { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...streamedCall, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', sequence_number: 2, output_index: 0, item_id: 'fc_111', delta: '{"city":"Paris"}' },
      { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item: streamedCall },
      { type: 'response.completed', sequence_number: 4, response: body('resp_v', 'completed', [{ ...streamedCall, id: 'fc_222', call_id: 'call_222' }]) },
    ]);
    expect(response.output.map((item: { call_id: string }) => item.call_id)).toEqual(['call_111']);
  });

  it('bridges that give every item output_index 0: two parallel calls stay two calls, each with its own arguments; two messages two messages', async () => {
    const call = (id: string, city: string) => ({ id: `fc_${id}`, type: 'function_call', call_id: `call_${id}`, name: 'get_weather', arguments: JSON.stringify({ city }), status: 'completed' });
    const a = call('a', 'Paris');
    const b = call('b', 'Rome');
    const { response } = await run([
      { type: 'response.created', response: body('resp_b', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...a, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_a', delta: a.arguments },
      { type: 'response.output_item.done', output_index: 0, item: a },
      { type: 'response.output_item.added', output_index: 0, item: { ...b, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_b', delta: b.arguments },
      { type: 'response.output_item.done', output_index: 0, item: b },
      { type: 'response.completed', response: body('resp_b', 'completed', [a, b]) },
    ]);
    expect(response.output.map((item: { call_id: string; arguments: string }) => [item.call_id, item.arguments])).toEqual([
      ['call_a', '{"city":"Paris"}'],
      ['call_b', '{"city":"Rome"}'],
    ]);

    const message = (id: string, text: string) => ({ id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
    const two = await run([
      { type: 'response.created', response: body('resp_c', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...message('msg_1', ''), content: [] } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_1', delta: 'A' },
      { type: 'response.output_item.done', output_index: 0, item: message('msg_1', 'A') },
      { type: 'response.output_item.added', output_index: 0, item: { ...message('msg_2', ''), content: [] } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_2', delta: 'B' },
      { type: 'response.output_item.done', output_index: 0, item: message('msg_2', 'B') },
      { type: 'response.completed', response: body('resp_c', 'completed', [message('msg_1', 'A'), message('msg_2', 'B')]) },
    ]);
    expect(two.response.output.map((item: { content: { text: string }[] }) => item.content[0]!.text)).toEqual(['A', 'B']);
  });

  it('a server without ids that streamed only its text and lists a reasoning item first in the terminal output: the reasoning added, the text said once', async () => {
    const message = { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] };
    const reasoning = { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'I thought hard' }] };
    const { response } = await run([
      { type: 'response.created', response: body('resp_r', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello' },
      { type: 'response.output_item.done', output_index: 0, item: message },
      { type: 'response.completed', response: body('resp_r', 'completed', [reasoning, message]) },
    ]);
    expect(response.output.map((item: { type: string }) => item.type).sort()).toEqual(['message', 'reasoning']);
    expect(response.output.find((item: { type: string }) => item.type === 'reasoning').content[0].text).toBe('I thought hard');
    expect(response.output.find((item: { type: string }) => item.type === 'message').content[0].text).toBe('Hello');
  });

  it('a call the stream never said, listed in the terminal output before one it did: both calls, each once', async () => {
    const call = (id: string, name: string) => ({ id: `fc_${id}`, type: 'function_call', call_id: `call_${id}`, name, arguments: '{}', status: 'completed' });
    const streamedCall = call('2', 'get_time');
    const { response } = await run([
      { type: 'response.created', response: body('resp_u', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...streamedCall, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_2', delta: '{}' },
      { type: 'response.output_item.done', output_index: 0, item: streamedCall },
      { type: 'response.completed', response: body('resp_u', 'completed', [call('1', 'get_weather'), streamedCall]) },
    ]);
    expect(response.output.map((item: { name: string }) => item.name).sort()).toEqual(['get_time', 'get_weather']);
  });

  it("text streamed before its item was added (or never added) is said once", async () => {
    const message = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello world', annotations: [] }] };
    const { response } = await run([
      { type: 'response.created', response: body('resp_d', 'in_progress', []) },
      { type: 'response.output_text.delta', item_id: 'msg_1', delta: 'Hello ' },
      { type: 'response.output_text.delta', item_id: 'msg_1', delta: 'world' },
      { type: 'response.completed', response: body('resp_d', 'completed', [message]) },
    ]);
    expect(response.output.map((item: { content: { text: string }[] }) => item.content[0]!.text)).toEqual(['Hello world']);
  });

  it("text before its message was added, and deltas naming the open message by another id: one message, its text once", async () => {
    const message = (id: string) => ({ id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello world', annotations: [] }] });
    const early = await run([
      { type: 'response.created', response: body('resp_e1', 'in_progress', []) },
      { type: 'response.output_text.delta', item_id: 'msg_A', delta: 'Hello ' },
      { type: 'response.output_item.added', item: { ...message('msg_A'), content: [], status: 'in_progress' } },
      { type: 'response.output_text.delta', item_id: 'msg_A', delta: 'world' },
      { type: 'response.output_item.done', item: message('msg_A') },
      { type: 'response.completed', response: body('resp_e1', 'completed', [message('msg_A')]) },
    ]);
    expect(early.response.output.map((item: { content: { text: string }[] }) => item.content[0]!.text)).toEqual(['Hello world']);
    const renamed = await run([
      { type: 'response.created', response: body('resp_e2', 'in_progress', []) },
      { type: 'response.output_item.added', item: { ...message('msg_A'), content: [], status: 'in_progress' } },
      { type: 'response.output_text.delta', item_id: 'msg_B', delta: 'Hello ' },
      { type: 'response.output_text.delta', item_id: 'msg_B', delta: 'world' },
      { type: 'response.output_item.done', item: message('msg_A') },
      { type: 'response.completed', response: body('resp_e2', 'completed', [message('msg_A')]) },
    ]);
    expect(renamed.response.output.map((item: { content: { text: string }[] }) => item.content[0]!.text)).toEqual(['Hello world']);
  });

  it('a bridge that puts every item at output_index 0: a reasoning item, then text for a message never added, are two items, each said once', async () => {
    const reasoning = { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Hmm.' }] };
    const message = { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] };
    const { response } = await run([
      { type: 'response.created', response: body('resp_z', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { ...reasoning, content: [] } },
      { type: 'response.reasoning_text.delta', output_index: 0, delta: 'Hmm.' },
      { type: 'response.output_item.done', output_index: 0, item: reasoning },
      { type: 'response.output_text.delta', output_index: 0, delta: 'Hi' },
      { type: 'response.completed', response: body('resp_z', 'completed', [reasoning, message]) },
    ]);
    expect(response.output.map((item: { type: string; content: { text: string }[] }) => [item.type, item.content[0]!.text])).toEqual([
      ['reasoning', 'Hmm.'],
      ['message', 'Hi'],
    ]);
  });

  it.each([
    ['an error event', { type: 'error', error: { type: 'server_error', code: 500, message: 'Engine died' } }, 'server_error', 'Engine died'],
    ['response.failed', { type: 'response.failed', response: { ...body('resp_f', 'failed', []), error: { code: 502, message: 'Provider returned error' } } }, 'upstream_error', 'Provider returned error'],
    ["vLLM's untyped error frame", { error: { message: 'kv load failed', type: 'InternalServerError', param: null, code: 500 } }, 'upstream_error', 'kv load failed'],
  ])('%s with a number for its code, after content: the response fails with a code that is a word, the partial text kept', async (_kind, failure, code, words) => {
    const { response } = await run([
      { type: 'response.created', response: body('resp_e', 'in_progress', []) },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_e', type: 'message', role: 'assistant', content: [] } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_e', delta: 'partial ' },
      failure,
    ]);
    expect(response.status).toBe('failed');
    expect(response.error).toMatchObject({ code, message: expect.stringContaining(words) });
    expect(response.output[0].content[0].text).toBe('partial ');
  });

  it("before content: vLLM's untyped error frame stating 400 is the client's 400 with its message", async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: frames([{ type: 'response.created', response: body('resp_g', 'in_progress', []) }, { error: { message: 'Invalid tool schema: missing type', type: 'BadRequestError', param: 'tools', code: 400 } }]) }));
    const error = await provider.startTurn(turnRequest({ model: 'm', stream: true }), new AbortController().signal).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'tools', message: 'Invalid tool schema: missing type' });
  });
});
