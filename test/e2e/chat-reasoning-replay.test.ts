import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * DeepSeek's thinking mode gives its reasoning as `reasoning_content` and
 * refuses a tool loop whose assistant messages come back without it (400
 * "Missing `reasoning_content` field in the assistant message at message
 * index N"). The scripted upstream holds the gateway to that rule, so every
 * second model call of a tool loop — a client's, the gateway's own MCP loop,
 * a stateless resend — shows whether the reasoning went back.
 */
const REASONING = ['I need the sum first.', 'The tool said 42.'];

function deepSeekLike(request: RecordedRequest): UpstreamReply {
  const messages = request.body.messages as { role: string; tool_calls?: unknown[]; reasoning_content?: string }[];
  const index = messages.findIndex((message) => message.role === 'assistant' && message.tool_calls && !message.reasoning_content);
  if (index >= 0) {
    return { kind: 'json', status: 400, body: { error: { message: `Missing \`reasoning_content\` field in the assistant message at message index ${index}.`, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } };
  }
  const answered = messages.some((message) => message.role === 'tool');
  const message = answered
    ? { role: 'assistant', content: 'The sum is 42.', reasoning_content: REASONING[1] }
    : { role: 'assistant', content: null, reasoning_content: REASONING[0], tool_calls: [{ id: 'call_1', type: 'function', function: { name: toolName(request), arguments: '{"a":40,"b":2}' } }] };
  return { kind: 'json', body: { id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'deepseek-reasoner', choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } };
}

const toolName = (request: RecordedRequest) => ((request.body.tools ?? []) as { function: { name: string } }[])[0]?.function.name ?? 'add';

describe('reasoning from a Chat server goes back with its turn (DeepSeek thinking mode)', () => {
  const upstream = new ScriptedChatUpstream(deepSeekLike);
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  const addTool = { type: 'function' as const, name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, strict: false };

  beforeAll(async () => {
    const mcpUrl = await mcp.start();
    gateway = await startGateway(await upstream.start(), { mcp: { servers: [{ name: 'calc', url: mcpUrl, allowedTools: ['add'] }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await mcp.close();
  });

  const assistantSent = () => (upstream.requests.at(-1)!.body.messages as { role: string }[]).filter((message) => message.role === 'assistant');

  it('a client tool answered with previous_response_id', async () => {
    const first = await client.responses.create({ model: 'deepseek-reasoner', input: 'Add 40 and 2.', tools: [addTool] });
    assertValidResponse(first);
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({ model: 'deepseek-reasoner', previous_response_id: first.id, tools: [addTool], input: [{ type: 'function_call_output', call_id: call.call_id, output: '42' }] });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe('The sum is 42.');
    expect(assistantSent()).toEqual([{ role: 'assistant', content: null, reasoning_content: REASONING[0], tool_calls: [expect.objectContaining({ id: call.call_id })] }]);
  });

  it('the same turn resent whole by a stateless client (store: false)', async () => {
    const first = await client.responses.create({ model: 'deepseek-reasoner', input: 'Add 40 and 2.', tools: [addTool], store: false });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({
      model: 'deepseek-reasoner',
      store: false,
      tools: [addTool],
      input: [{ role: 'user', content: 'Add 40 and 2.' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: '42' }],
    });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(assistantSent()[0]).toMatchObject({ reasoning_content: REASONING[0] });
  });

  it('sealed for a client that resends only sealed reasoning: the AI SDK with store: false (its tool loop), and the same by hand', async () => {
    // Asked for (include reasoning.encrypted_content), the reasoning is sealed in encrypted_content as well as given in the clear.
    const first = await client.responses.create({ model: 'deepseek-reasoner', input: 'Add 40 and 2.', tools: [addTool], store: false, include: ['reasoning.encrypted_content'] });
    const reasoning = first.output.find((item) => item.type === 'reasoning')!;
    expect(reasoning).toMatchObject({ content: [{ type: 'reasoning_text', text: REASONING[0] }], encrypted_content: expect.stringMatching(/^loopgate\.reasoning\.v1:/) });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const second = await client.responses.create({
      model: 'deepseek-reasoner',
      store: false,
      tools: [addTool],
      // What such a client keeps of the reasoning: its id and the sealed value.
      input: [{ role: 'user', content: 'Add 40 and 2.' }, { type: 'reasoning', id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content }, call, { type: 'function_call_output', call_id: call.call_id, output: '42' }],
    });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(assistantSent()[0]).toMatchObject({ reasoning_content: REASONING[0] });

    // The AI SDK sends include reasoning.encrypted_content for a reasoning model with store: false, and drops reasoning without it.
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'k' });
    const result = await generateText({
      model: openai.responses('gpt-5-deepseek'),
      prompt: 'Add 40 and 2.',
      tools: { add: tool({ inputSchema: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => String(a + b) }) },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { store: false } },
    });
    expect(result.text).toBe('The sum is 42.');
    expect(assistantSent()[0]).toMatchObject({ reasoning_content: REASONING[0] });
  });

  it("the gateway's own MCP loop, and the next turn after it", async () => {
    const first = await client.responses.create({ model: 'deepseek-reasoner', input: 'Add 40 and 2.' });
    assertValidResponseWithMcpItems(first);
    expect(first.status).toBe('completed');
    expect(first.output_text).toBe('The sum is 42.');
    expect(mcp.callsOf('add')).toEqual([{ a: 40, b: 2 }]);
    expect(assistantSent()).toEqual([expect.objectContaining({ reasoning_content: REASONING[0], tool_calls: [expect.anything()] })]);
    // A later turn: each assistant message of the earlier one carries its own reasoning, none another's.
    const next = await client.responses.create({ model: 'deepseek-reasoner', previous_response_id: first.id, input: 'Thanks.' });
    assertValidResponse(next);
    expect(next.status).toBe('completed');
    const replayed = (upstream.requests.at(-1)!.body.messages as Record<string, unknown>[]).map(({ role, reasoning_content }) => ({ role, reasoning_content }));
    expect(replayed).toEqual([
      { role: 'user', reasoning_content: undefined },
      { role: 'assistant', reasoning_content: REASONING[0] },
      { role: 'tool', reasoning_content: undefined },
      { role: 'assistant', reasoning_content: REASONING[1] },
      { role: 'user', reasoning_content: undefined },
    ]);
  });
});
