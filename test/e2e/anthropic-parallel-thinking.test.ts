import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * Claude with extended thinking calls two tools in one message, with text
 * before each call as it often writes. On the next call Anthropic wants that
 * message back whole: one assistant message that starts with its thinking
 * block and holds both tool_use blocks, then one user message with both
 * results. The scripted upstream refuses anything else as Anthropic does
 * ("a final assistant message must start with a thinking block"), so a
 * history split into one call per turn fails the loop.
 */
const event = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

function claudeTurn(blocks: Record<string, unknown>[], stopReason: string): UpstreamReply {
  const pieces = [event('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude-test', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })];
  blocks.forEach((block, index) => {
    if (block.type === 'thinking') {
      pieces.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      pieces.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      pieces.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else if (block.type === 'text') {
      pieces.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      pieces.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    } else {
      pieces.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      pieces.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
    }
    pieces.push(event('content_block_stop', { index }));
  });
  pieces.push(event('message_delta', { delta: { stop_reason: stopReason }, usage: { output_tokens: 5 } }), event('message_stop', {}));
  return { kind: 'sse', pieces };
}

/** Anthropic's own check, as far as this test needs it. */
function refusal(request: RecordedRequest): string | null {
  const messages = request.body.messages as { role: string; content: { type: string }[] }[];
  const lastAssistant = messages.findLast((message) => message.role === 'assistant');
  if (request.body.thinking && lastAssistant && messages.at(-1)?.role === 'user' && messages.at(-1)!.content[0]?.type === 'tool_result' && lastAssistant.content[0]?.type !== 'thinking') {
    return "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.";
  }
  return null;
}

describe('Claude with thinking: one message with two tool calls goes back as one message', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  let tool = 'calc__add';

  beforeAll(async () => {
    const mcpUrl = await mcp.start();
    const url = await upstream.start();
    upstream.setScript((request) => {
      const problem = refusal(request);
      if (problem) return { kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: problem } } };
      const results = (request.body.messages as { content: { type: string }[] }[]).flatMap((message) => message.content.filter((block) => block.type === 'tool_result'));
      if (results.length > 0) return claudeTurn([{ type: 'thinking', thinking: 'Both are in.', signature: 'sig-2' }, { type: 'text', text: 'Done: 42 and 7.' }], 'end_turn');
      return claudeTurn(
        [
          { type: 'thinking', thinking: 'Two sums at once.', signature: 'sig-1' },
          { type: 'text', text: 'First sum.' },
          { type: 'tool_use', id: 'toolu_a', name: tool, input: { a: 40, b: 2 } },
          { type: 'text', text: 'Second sum.' },
          { type: 'tool_use', id: 'toolu_b', name: tool, input: { a: 3, b: 4 } },
        ],
        'tool_use',
      );
    });
    gateway = await startGateway('http://unused.invalid/v1', {
      providers: { anthropic: { type: 'anthropic', baseUrl: new URL(url).origin, apiKey: 'sk-ant-test', defaultMaxTokens: 4096 } },
      defaultProvider: 'anthropic',
      mcp: { servers: [{ name: 'calc', url: mcpUrl, allowedTools: ['add'] }] },
    });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await mcp.close();
  });

  /** The last request's messages as role and block types. */
  const shape = () => (upstream.requests.at(-1)!.body.messages as { role: string; content: { type: string }[] }[]).map((message) => `${message.role}: ${message.content.map((block) => block.type).join(' ')}`);
  const expected = ['user: text', 'assistant: thinking text tool_use text tool_use', 'user: tool_result tool_result'];

  it.each([false, true])("the gateway's own MCP loop runs both calls and continues (streamed: %s)", async (stream) => {
    tool = 'calc__add';
    const request = { model: 'claude-test', input: 'Add 40+2 and 3+4.', reasoning: { effort: 'high' as const } };
    const response = stream ? await client.responses.stream(request).finalResponse() : await client.responses.create(request);
    assertValidResponseWithMcpItems(response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toContain('Done: 42 and 7.');
    expect(mcp.callsOf('add')).toEqual(expect.arrayContaining([{ a: 40, b: 2 }, { a: 3, b: 4 }]));
    // The calls are hidden in mcp_call items, so the client sees the turn's text as one message: so does the model.
    expect(shape()).toEqual(['user: text', 'assistant: thinking text tool_use tool_use', 'user: tool_result tool_result']);
  });

  it('client tools answered with previous_response_id', async () => {
    tool = 'add';
    const tools = [{ type: 'function' as const, name: 'add', parameters: { type: 'object', properties: {} }, strict: false }];
    const first = await client.responses.create({ model: 'claude-test', input: 'Add 40+2 and 3+4.', reasoning: { effort: 'high' }, tools });
    assertValidResponse(first);
    const calls = first.output.filter((item) => item.type === 'function_call');
    expect(calls).toHaveLength(2);
    const second = await client.responses.create({
      model: 'claude-test',
      previous_response_id: first.id,
      reasoning: { effort: 'high' },
      tools,
      input: calls.map((call, index) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: ['42', '7'][index]! })),
    });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(shape()).toEqual(expected);
  });
});
