import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidEvent, assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * OpenRouter gives a model's reasoning as its own provider gave it,
 * `reasoning_details` (Claude's thinking and its signature, Gemini's
 * encrypted thought signature), streamed in pieces by `index`, and wants
 * them back on the assistant message of their turn, or those models refuse
 * the next call of a tool loop. The scripted upstream holds the gateway to that.
 */
const DETAILS = [
  { type: 'reasoning.text', text: 'I should add them.', signature: 'claude-sig-1', format: 'anthropic-claude-v1', index: 0 },
  { type: 'reasoning.encrypted', data: 'gemini-thought-blob', format: 'google-gemini-v1', index: 1, id: 'call_or1' },
];

/** JSON with each object's keys in order: the same details, whatever order their fields were merged in. */
const canonical = (value: unknown): string => JSON.stringify(value, (_key, inner: unknown) => (inner && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner));

function openRouterLike(request: RecordedRequest): UpstreamReply {
  const messages = request.body.messages as { role: string; tool_calls?: unknown[]; reasoning_details?: unknown }[];
  const assistant = messages.find((message) => message.role === 'assistant');
  if (assistant && canonical(assistant.reasoning_details) !== canonical(DETAILS)) {
    return { kind: 'json', status: 400, body: { error: { code: 400, message: `Corrupted thought signature: got ${JSON.stringify(assistant.reasoning_details)}` } } };
  }
  if (messages.some((message) => message.role === 'tool')) {
    return request.body.stream ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'It is 42.' }), chunk({}, 'stop'), usageChunk(10, 4)]) } : { kind: 'json', body: { id: 'gen-2', choices: [{ index: 0, message: { role: 'assistant', content: 'It is 42.' }, finish_reason: 'stop' }] } };
  }
  const call = { id: 'call_or1', type: 'function', function: { name: 'add', arguments: '{"a":40,"b":2}' } };
  if (!request.body.stream) {
    return { kind: 'json', body: { id: 'gen-1', choices: [{ index: 0, message: { role: 'assistant', content: '', reasoning: 'I should add them.', reasoning_details: DETAILS, tool_calls: [call] }, finish_reason: 'tool_calls' }] } };
  }
  return {
    kind: 'sse',
    pieces: [': OPENROUTER PROCESSING\n\n', ...sse([
      chunk({ role: 'assistant', content: '', reasoning: 'I should ', reasoning_details: [{ type: 'reasoning.text', text: 'I should ', format: 'anthropic-claude-v1', index: 0 }] }),
      chunk({ content: '', reasoning: 'add them.', reasoning_details: [{ type: 'reasoning.text', text: 'add them.', format: 'anthropic-claude-v1', index: 0 }] }),
      chunk({ content: '', reasoning_details: [{ type: 'reasoning.text', signature: 'claude-sig-1', format: 'anthropic-claude-v1', index: 0 }] }),
      chunk({ content: '', reasoning_details: [DETAILS[1]] }),
      chunk({ tool_calls: [{ index: 0, ...call }] }),
      chunk({}, 'tool_calls'),
      usageChunk(10, 5),
    ])],
  };
}

describe("OpenRouter's reasoning_details go back with their turn", () => {
  const upstream = new ScriptedChatUpstream(openRouterLike);
  let gateway: RunningGateway;
  let client: OpenAI;
  const addTool = { type: 'function' as const, name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, strict: false };

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const assistantSent = () => (upstream.requests.at(-1)!.body.messages as { role: string }[]).filter((message) => message.role === 'assistant');

  async function firstTurn(stream: boolean, extra: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming> = {}): Promise<OpenAI.Responses.Response> {
    if (!stream) return client.responses.create({ model: 'anthropic/claude-sonnet-4.5', input: 'Add 40 and 2.', tools: [addTool], ...extra });
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of await client.responses.create({ model: 'anthropic/claude-sonnet-4.5', input: 'Add 40 and 2.', tools: [addTool], ...extra, stream: true })) {
      assertValidEvent(event);
      if (event.type === 'response.completed') completed = event.response;
    }
    return completed!;
  }

  it.each([false, true])('with previous_response_id (streamed: %s): merged by index, sent back whole beside the reasoning text', async (stream) => {
    const first = await firstTurn(stream);
    assertValidResponse(first);
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(first.output[0]).toMatchObject({ content: [{ type: 'reasoning_text', text: 'I should add them.' }] });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({ model: 'anthropic/claude-sonnet-4.5', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '42' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('It is 42.');
    // OpenRouter's own model name, unchanged: there is no Anthropic provider here for the prefix to name.
    expect(upstream.requests.at(-1)!.body.model).toBe('anthropic/claude-sonnet-4.5');
    expect(assistantSent()).toEqual([expect.objectContaining({ reasoning: 'I should add them.', reasoning_details: DETAILS, tool_calls: [expect.objectContaining({ id: 'call_or1' })] })]);
  });

  it('resent whole by a stateless client that asked for its reasoning (store: false)', async () => {
    const first = await firstTurn(true, { store: false, include: ['reasoning.encrypted_content'] });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const reasoning = first.output.find((item) => item.type === 'reasoning')!;
    const second = await client.responses.create({
      model: 'anthropic/claude-sonnet-4.5',
      store: false,
      tools: [addTool],
      // What such a client keeps of the reasoning: its id and the sealed value.
      input: [{ role: 'user', content: 'Add 40 and 2.' }, { type: 'reasoning', id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content }, call, { type: 'function_call_output', call_id: call.call_id, output: '42' }],
    });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(assistantSent()[0]).toMatchObject({ reasoning: 'I should add them.', reasoning_details: DETAILS });
  });
});
