import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * Chat servers disagree on the field an assistant message's reasoning comes
 * back in: current vLLM and Ollama read only `reasoning` (and drop
 * `reasoning_content` without a word: a gpt-oss tool loop loses its
 * analysis); Groq refuses `reasoning_content` with a 400. Each names the
 * field in its own answers; the scripted servers hold the gateway to it.
 */
const PLAN = 'PLAN-42: call add, then answer.';
const addTool = { type: 'function' as const, name: 'add', parameters: { type: 'object', properties: {} }, strict: false };

function readsReasoningOnly(refusesOther: boolean) {
  return (request: RecordedRequest): UpstreamReply => {
    const messages = request.body.messages as { role: string; reasoning?: string; reasoning_content?: string }[];
    const assistant = messages.find((message) => message.role === 'assistant');
    if (refusesOther && assistant?.reasoning_content !== undefined) {
      return { kind: 'json', status: 400, body: { error: { message: "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]", type: 'invalid_request_error', param: null, code: null } } };
    }
    if (assistant) return { kind: 'json', body: { id: 'c2', object: 'chat.completion', model: 'gpt-oss-120b', choices: [{ index: 0, message: { role: 'assistant', content: assistant.reasoning === PLAN ? 'Done as planned.' : 'PRIOR_REASONING_LOST' }, finish_reason: 'stop' }] } };
    return { kind: 'json', body: { id: 'c1', object: 'chat.completion', model: 'gpt-oss-120b', choices: [{ index: 0, message: { role: 'assistant', content: null, reasoning: PLAN, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } };
  };
}

describe('reasoning goes back in the field the Chat server gives it in', () => {
  let gateway: RunningGateway | null = null;
  const upstream = new ScriptedChatUpstream();
  afterEach(async () => {
    await gateway?.close();
    await upstream.close();
  });

  async function start(script: (request: RecordedRequest) => UpstreamReply): Promise<OpenAI> {
    upstream.setScript(script);
    gateway = await startGateway(await upstream.start());
    return new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  }

  it('vLLM and Ollama (they give `reasoning` and read only it): the next turn carries it there', async () => {
    const client = await start(readsReasoningOnly(false));
    const first = await client.responses.create({ model: 'gpt-oss-120b', input: 'Add.', tools: [addTool] });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({ model: 'gpt-oss-120b', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '2' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('Done as planned.');
    expect(upstream.requests.at(-1)!.body.messages[1]).not.toHaveProperty('reasoning_content');
  });

  it("Groq (it refuses `reasoning_content`): a model that answered in `reasoning` gets it back there; one not heard from is sent none, and no field it could refuse", async () => {
    const client = await start(readsReasoningOnly(true));
    const first = await client.responses.create({ model: 'openai/gpt-oss-120b', input: 'Add.', tools: [addTool] });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const before = upstream.requests.length;
    const second = await client.responses.create({ model: 'openai/gpt-oss-120b', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '2' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('Done as planned.');
    expect(upstream.requests.length - before).toBe(1);
    const fresh = await client.responses.create({
      model: 'qwen/qwen3-32b',
      store: false,
      tools: [addTool],
      input: [{ role: 'user', content: 'Add.' }, { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: PLAN }] }, { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: '2' }],
    });
    assertValidResponse(fresh);
    expect(upstream.requests.at(-1)!.body.messages[1]).not.toHaveProperty('reasoning_content');
    expect(upstream.requests.at(-1)!.body.messages[1]).not.toHaveProperty('reasoning');
  });

  it('a server that refuses the field a model answered in gets the other, once, and keeps it', async () => {
    // A server that answers in `reasoning_content` and reads only `reasoning` (a proxy in front of vLLM, say): told by its refusal.
    const client = await start((request) => {
      const messages = request.body.messages as { role: string; reasoning?: string; reasoning_content?: string }[];
      const assistant = messages.find((message) => message.role === 'assistant');
      if (assistant?.reasoning_content !== undefined) return { kind: 'json', status: 400, body: { error: { message: "property 'reasoning_content' is unsupported", type: 'invalid_request_error' } } };
      if (assistant) return { kind: 'json', body: { id: 'c2', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: assistant.reasoning === PLAN ? 'Done as planned.' : 'PRIOR_REASONING_LOST' }, finish_reason: 'stop' }] } };
      return { kind: 'json', body: { id: 'c1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, reasoning_content: PLAN, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } };
    });
    const first = await client.responses.create({ model: 'm', input: 'Add.', tools: [addTool] });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const before = upstream.requests.length;
    const second = await client.responses.create({ model: 'm', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '2' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('Done as planned.');
    expect(upstream.requests.length - before).toBe(2);
  });

  it("DeepSeek's refusal of a history without its reasoning is no refusal of the field: nothing switches, and another client's tool loop goes on", async () => {
    const client = await start((request) => {
      const messages = request.body.messages as { role: string; tool_calls?: unknown[]; reasoning_content?: string }[];
      const index = messages.findIndex((message) => message.role === 'assistant' && message.tool_calls && !message.reasoning_content);
      if (index >= 0) return { kind: 'json', status: 400, body: { error: { message: `Missing \`reasoning_content\` field in the assistant message at message index ${index}.`, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } };
      const answered = messages.some((message) => message.role === 'tool');
      return { kind: 'json', body: { id: 'd', object: 'chat.completion', model: 'deepseek-reasoner', choices: [{ index: 0, message: answered ? { role: 'assistant', content: 'ds final' } : { role: 'assistant', content: null, reasoning_content: PLAN, tool_calls: [{ id: 'call_d', type: 'function', function: { name: 'add', arguments: '{}' } }] }, finish_reason: answered ? 'stop' : 'tool_calls' }] } };
    });
    const first = await client.responses.create({ model: 'deepseek-reasoner', input: 'Add.', tools: [addTool] });
    assertValidResponse(first);
    // Another client resends a history whose call carries no DeepSeek reasoning (a conversation moved from another model): DeepSeek's 400, once.
    const before = upstream.requests.length;
    const moved = await client.responses
      .create({ model: 'deepseek-reasoner', store: false, tools: [addTool], input: [{ role: 'user', content: 'Add.' }, { type: 'reasoning', id: 'rs_x', summary: [], content: [{ type: 'reasoning_text', text: '' }] }, { type: 'function_call', call_id: 'call_x', name: 'add', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_x', output: '2' }] })
      .catch((error: unknown) => error);
    expect(moved).toBeInstanceOf(OpenAI.BadRequestError);
    expect(upstream.requests.length - before).toBe(1);
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({ model: 'deepseek-reasoner', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '2' }] });
    assertValidResponse(second);
    expect(second.output_text).toBe('ds final');
  });

  it("a conversation begun on another provider goes on on DeepSeek: it asks for the reasoning, and gets the text the other provider's item shows", async () => {
    const client = await start((request) => {
      const messages = request.body.messages as { role: string; tool_calls?: unknown[]; reasoning_content?: string }[];
      const index = messages.findIndex((message) => message.role === 'assistant' && message.tool_calls && !message.reasoning_content);
      if (index >= 0) return { kind: 'json', status: 400, body: { error: { message: `Missing \`reasoning_content\` field in the assistant message at message index ${index}.`, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } };
      return { kind: 'json', body: { id: 'd', object: 'chat.completion', model: 'deepseek-reasoner', choices: [{ index: 0, message: { role: 'assistant', content: 'ds final' }, finish_reason: 'stop' }] } };
    });
    const before = upstream.requests.length;
    // Claude's thinking, as the Anthropic provider keeps it: sealed for Claude, its text in the clear.
    const moved = await client.responses.create({
      model: 'deepseek-reasoner',
      store: false,
      tools: [addTool],
      input: [{ role: 'user', content: 'Add.' }, { type: 'reasoning', id: 'rs_c', summary: [], content: [{ type: 'reasoning_text', text: 'Claude planned to add.' }], encrypted_content: 'anthropic.thinking.v1:eyJ9' }, { type: 'function_call', call_id: 'toolu_1', name: 'add', arguments: '{}' }, { type: 'function_call_output', call_id: 'toolu_1', output: '2' }],
    });
    assertValidResponse(moved);
    expect(moved.output_text).toBe('ds final');
    expect(upstream.requests.length - before).toBe(2);
    expect(upstream.requests.at(-1)!.body.messages[1]).toMatchObject({ reasoning_content: 'Claude planned to add.' });
  });
});
