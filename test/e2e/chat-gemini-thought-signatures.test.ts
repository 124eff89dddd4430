import { Agent, Runner, setTracingDisabled, tool } from '@openai/agents';
import { OpenAIProvider } from '@openai/agents-openai';
import OpenAI from 'openai';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidEvent, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

setTracingDisabled(true);

/**
 * Gemini's OpenAI-compatible endpoint gives each tool call of a Gemini 3
 * model a thought signature (`tool_calls[].extra_content.google.thought_signature`)
 * and refuses the next turn with a 400 when a call comes back without its
 * own. The scripted upstream holds the gateway to that rule, so every second
 * model call of a tool loop shows whether the signature went back.
 */
const signatureOf = (callId: string) => `sig-for-${callId}`;
const issued = new Set([signatureOf('gcall-1')]);

interface SentCall {
  id: string;
  function: { name: string };
  extra_content?: { google?: { thought_signature?: string } };
}

function geminiCompatLike(request: RecordedRequest): UpstreamReply {
  const messages = request.body.messages as { role: string; tool_calls?: SentCall[] }[];
  for (const [index, message] of messages.entries()) {
    const first = message.tool_calls?.[0];
    // Gemini checks that the step's first call carries a signature it issued (an MCP call comes back under the gateway's own id).
    if (first && !issued.has(first.extra_content?.google?.thought_signature ?? '')) {
      return { kind: 'json', status: 400, body: [{ error: { code: 400, message: `Function call is missing a thought_signature in functionCall parts. Message index ${index}.`, status: 'INVALID_ARGUMENT' } }] };
    }
  }
  const answered = messages.some((message) => message.role === 'tool');
  const name = ((request.body.tools ?? []) as { function: { name: string } }[])[0]?.function.name ?? 'add';
  // Gemini's own ids; a signature only on the step's first call.
  const calls = [
    { id: 'gcall-1', type: 'function', function: { name, arguments: '{"a":40,"b":2}' }, extra_content: { google: { thought_signature: signatureOf('gcall-1') } } },
    ...(request.body.parallel_tool_calls === false ? [] : [{ id: 'gcall-2', type: 'function', function: { name, arguments: '{"a":1,"b":1}' } }]),
  ];
  if (request.body.stream) {
    const pieces = answered
      ? [chunk({ role: 'assistant', content: 'The sum is 42.' }), chunk({}, 'stop'), usageChunk(10, 5)]
      : [chunk({ role: 'assistant', tool_calls: calls.map((call, index) => ({ index, ...call })) }), chunk({}, 'tool_calls'), usageChunk(10, 5)];
    return { kind: 'sse', pieces: sse(pieces) };
  }
  const message = answered ? { role: 'assistant', content: 'The sum is 42.' } : { role: 'assistant', content: null, tool_calls: calls };
  return { kind: 'json', body: { id: 'gemini-1', object: 'chat.completion', created: 0, model: 'gemini-3-pro-preview', choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } };
}

describe("Gemini's thought signatures through its OpenAI compatibility go back on their calls", () => {
  const upstream = new ScriptedChatUpstream(geminiCompatLike);
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

  const callsSent = () => (upstream.requests.at(-1)!.body.messages as { role: string; tool_calls?: SentCall[] }[]).flatMap((message) => message.tool_calls ?? []);
  const answers = (calls: { call_id: string }[]) => calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: '42' }));

  it.each([false, true])('client tools answered with previous_response_id (streamed: %s)', async (stream) => {
    let first: OpenAI.Responses.Response;
    if (stream) {
      const events = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add 40 and 2, and 1 and 1.', tools: [addTool], stream: true });
      let completed: OpenAI.Responses.Response | null = null;
      for await (const event of events) {
        assertValidEvent(event);
        if (event.type === 'response.completed') completed = event.response;
      }
      first = completed!;
    } else {
      first = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add 40 and 2, and 1 and 1.', tools: [addTool] });
    }
    assertValidResponse(first);
    const calls = first.output.filter((item) => item.type === 'function_call');
    expect(calls.map((call) => call.call_id)).toEqual(['gcall-1', 'gcall-2']);
    const second = await client.responses.create({ model: 'gemini-3-pro-preview', previous_response_id: first.id, tools: [addTool], input: answers(calls) });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe('The sum is 42.');
    // Each call exactly as it came: the signature on the one that had it, nothing on the other.
    expect(callsSent()).toEqual([
      { id: 'gcall-1', type: 'function', function: { name: 'add', arguments: '{"a":40,"b":2}' }, extra_content: { google: { thought_signature: signatureOf('gcall-1') } } },
      { id: 'gcall-2', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":1}' } },
    ]);
  });

  it('the turn resent whole by a stateless client that asked for its reasoning (store: false, include reasoning.encrypted_content)', async () => {
    const first = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add.', tools: [addTool], store: false, include: ['reasoning.encrypted_content'] });
    assertValidResponse(first);
    const calls = first.output.filter((item) => item.type === 'function_call');
    const second = await client.responses.create({
      model: 'gemini-3-pro-preview',
      store: false,
      tools: [addTool],
      input: [{ role: 'user', content: 'Add.' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), ...answers(calls)],
    });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(callsSent()[0]).toMatchObject({ id: 'gcall-1', extra_content: { google: { thought_signature: signatureOf('gcall-1') } } });
  });

  it('the Agents SDK’s own tool loop', async () => {
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client as never, useResponses: true }), tracingDisabled: true });
    const add = tool({ name: 'add', description: 'Adds', parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => String(a + b) });
    const agent = new Agent({ name: 'adder', model: 'gemini-3-pro-preview', tools: [add], modelSettings: { parallelToolCalls: false } });
    const result = await runner.run(agent, 'Add 40 and 2.');
    expect(result.finalOutput).toBe('The sum is 42.');
    expect(callsSent()).toEqual([expect.objectContaining({ id: 'gcall-1', extra_content: { google: { thought_signature: signatureOf('gcall-1') } } })]);
  });

  it("the gateway's own MCP loop, and the next turn after it", async () => {
    const first = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add 40 and 2.', parallel_tool_calls: false });
    assertValidResponseWithMcpItems(first);
    expect(first.status).toBe('completed');
    expect(first.output_text).toBe('The sum is 42.');
    expect(mcp.callsOf('add')).toEqual([{ a: 40, b: 2 }]);
    const next = await client.responses.create({ model: 'gemini-3-pro-preview', previous_response_id: first.id, input: 'Thanks.', parallel_tool_calls: false });
    assertValidResponse(next);
    expect(next.status).toBe('completed');
    // The MCP call goes back under the gateway's item id, its signature found by its name and arguments.
    expect(callsSent()).toEqual([expect.objectContaining({ function: expect.objectContaining({ arguments: '{"a":40,"b":2}' }), extra_content: { google: { thought_signature: signatureOf('gcall-1') } } })]);
  });

  it("a refusal in Google's array form keeps Google's message", async () => {
    const unsigned = { type: 'function_call' as const, call_id: 'foreign-1', name: 'add', arguments: '{}' };
    const refused = await client.responses.create({ model: 'gemini-3-pro-preview', tools: [addTool], input: [{ role: 'user', content: 'Add.' }, unsigned, { type: 'function_call_output', call_id: 'foreign-1', output: '0' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_argument', message: expect.stringContaining('missing a thought_signature') });
  });
});
