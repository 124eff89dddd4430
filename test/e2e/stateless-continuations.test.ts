import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { ScriptedChatUpstream, textCompletion, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** Calls the named tools in one turn until it has seen a result for each, then answers with what it saw. */
function modelCalling(calls: { name: string; args: Record<string, unknown> }[]): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool').map((message) => message.content);
    if (results.length > 0) return textCompletion(`saw ${results.join(' | ')}`);
    const toolCalls = calls.map((call, index) => ({ id: `call_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }] } };
  };
}

/** Whatever previous_response_id does, resending the items does too (the Agents SDK, the AI SDK and Codex keep the conversation themselves). */
describe('stateless continuations', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const lookup = new MockExecutor(['lookup'], async () => ({ output: 'looked up', isError: false }));
  let gateway: RunningGateway;
  let mcpTool: Record<string, unknown>;
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', ...body }) });
    const answer = { status: response.status, body: (await response.json()) as any };
    if (answer.status === 200) assertValidResponseWithOpenAIItems(answer.body);
    return answer;
  };

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    mcpTool = { type: 'mcp', server_label: 'calc', server_url: mcpUrl };
    gateway = await startGateway(upstreamUrl, { mcp: { allowedUrls: [`${new URL(mcpUrl).origin}/`] } }, {}, [lookup]);
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('an MCP approval answered by resending [user, mcp_list_tools, mcp_approval_request, mcp_approval_response] (the Agents SDK)', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 20, b: 22 } }]));
    const paused = await post({ input: 'add', tools: [mcpTool], store: false });
    expect(paused.body.status).toBe('requires_action');
    const [listing, request] = paused.body.output;
    expect(request.type).toBe('mcp_approval_request');
    const calls = mcp.calls.length;
    const listings = mcp.listCalls;

    const resumed = await post({ tools: [mcpTool], input: [{ role: 'user', content: 'add' }, listing, request, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(resumed.status).toBe(200);
    expect(resumed.body.output.map((item: any) => item.type)).toEqual(['mcp_call', 'message']);
    expect(resumed.body.output[0]).toMatchObject({ approval_request_id: request.id, output: '42' });
    expect(resumed.body.output[1].content[0].text).toBe('saw 42');
    expect(mcp.calls.length).toBe(calls + 1);
    // The resent listing is reused: the server is not listed again.
    expect(mcp.listCalls).toBe(listings);
  });

  it('an MCP approval answered with [user, item_reference(mcpr_…), mcp_approval_response] (the AI SDK)', async () => {
    upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 1, b: 1 } }]));
    const paused = await post({ input: 'add', tools: [mcpTool] });
    const request = paused.body.output.find((item: any) => item.type === 'mcp_approval_request');
    const resumed = await post({ tools: [mcpTool], input: [{ role: 'user', content: 'add' }, { type: 'item_reference', id: request.id }, { type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(resumed.status).toBe(200);
    // Nothing resent the listing, so the server is listed again; then the approved call runs.
    expect(resumed.body.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(resumed.body.output[1]).toMatchObject({ type: 'mcp_call', approval_request_id: request.id, output: '2' });
  });

  it('an approval for a request the conversation does not hold is a 400', async () => {
    const refused = await post({ tools: [mcpTool], input: [{ role: 'user', content: 'add' }, { type: 'mcp_approval_response', approval_request_id: 'mcpr_nowhere', approve: true }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'unknown_approval_request', param: 'input[1].approval_request_id' });
  });

  it('resent calls: the client answers its own, the gateway runs the server-side one the model made in the same turn', async () => {
    upstream.setScript(modelCalling([{ name: 'lookup', args: {} }]));
    const before = lookup.calls.length;
    const resumed = await post({
      tools: [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }, { type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'call_client', name: 'ask_user', arguments: '{}' },
        { type: 'function_call', call_id: 'call_server', name: 'lookup', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_client', output: 'yes' },
      ],
    });
    expect(resumed.status).toBe(200);
    expect(lookup.calls.length).toBe(before + 1);
    expect(resumed.body.output[0]).toMatchObject({ type: 'function_call_output', call_id: 'call_server', output: 'looked up' });
    const toolMessages = (upstream.requests.at(-1)!.body.messages as any[]).filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.content).sort()).toEqual(['looked up', 'yes']);
  });

  it('resent calls answered only in part (a client call left out) are a 400, as with previous_response_id', async () => {
    const refused = await post({
      tools: [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }],
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'call_a', name: 'ask_user', arguments: '{}' },
        { type: 'function_call', call_id: 'call_b', name: 'ask_user', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'yes' },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('missing_function_call_output');
  });

  it('resent calls the client went on past with a new message are closed, as with previous_response_id: no upstream is sent a call without its result', async () => {
    upstream.setScript(() => textCompletion('fine'));
    const moved = await post({
      tools: [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }],
      store: false,
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'call_left', name: 'ask_user', arguments: '{}' },
        { role: 'user', content: 'never mind' },
      ],
    });
    expect(moved.status).toBe(200);
    expect(moved.body.output[0]).toMatchObject({ type: 'function_call_output', call_id: 'call_left', output: expect.stringContaining('not run') });
    const messages = upstream.requests.at(-1)!.body.messages as any[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(messages[2]).toMatchObject({ tool_call_id: 'call_left' });
  });

  /** A conversation continues its paused turn as previous_response_id does: the Agents SDK's `conversationId` sends only the answers. */
  describe('inside a conversation', () => {
    const conversation = async (): Promise<string> => {
      const response = await fetch(`${gateway.baseURL}/conversations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return ((await response.json()) as { id: string }).id;
    };
    const itemTypes = async (id: string): Promise<string[]> => {
      const response = await fetch(`${gateway.baseURL}/conversations/${id}/items?order=asc&limit=100`);
      return ((await response.json()) as { data: { type: string }[] }).data.map((item) => item.type);
    };

    it('an MCP approval the conversation paused on is answered with the approval alone: the call runs', async () => {
      upstream.setScript(modelCalling([{ name: 'calc__add', args: { a: 40, b: 2 } }]));
      const id = await conversation();
      const paused = await post({ conversation: id, input: 'add', tools: [{ ...mcpTool, require_approval: 'always' }] });
      const request = paused.body.output.find((item: any) => item.type === 'mcp_approval_request');
      expect(request).toBeDefined();
      const calls = mcp.calls.length;

      const resumed = await post({ conversation: id, tools: [{ ...mcpTool, require_approval: 'always' }], input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
      expect(resumed.status).toBe(200);
      expect(resumed.body.output.map((item: any) => item.type)).toEqual(['mcp_call', 'message']);
      expect(resumed.body.output[0]).toMatchObject({ approval_request_id: request.id, output: '42' });
      expect(resumed.body.output[1].content[0].text).toBe('saw 42');
      expect(mcp.calls.length).toBe(calls + 1);
      expect(await itemTypes(id)).toEqual(['message', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response', 'mcp_call', 'message']);
    });

    it('an approval the conversation does not hold pending is a 400', async () => {
      const id = await conversation();
      const refused = await post({ conversation: id, tools: [mcpTool], input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nowhere', approve: true }] });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'unknown_approval_request', param: 'input[0].approval_request_id' });
    });

    it('the client answers its call, the gateway runs the server-side call of the same paused turn', async () => {
      upstream.setScript(modelCalling([{ name: 'ask_user', args: {} }, { name: 'lookup', args: {} }]));
      const tools = [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }, { type: 'function', name: 'lookup', parameters: { type: 'object' } }];
      const id = await conversation();
      const paused = await post({ conversation: id, input: 'go', tools });
      const clientCall = paused.body.output.find((item: any) => item.type === 'function_call' && item.name === 'ask_user');
      const before = lookup.calls.length;

      const resumed = await post({ conversation: id, tools, input: [{ type: 'function_call_output', call_id: clientCall.call_id, output: 'yes' }] });
      expect(resumed.status).toBe(200);
      expect(lookup.calls.length).toBe(before + 1);
      const toolMessages = (upstream.requests.at(-1)!.body.messages as any[]).filter((message) => message.role === 'tool');
      expect(toolMessages.map((message) => message.content).sort()).toEqual(['looked up', 'yes']);
    });

    it('a call left unanswered when the conversation moves on is closed, so the upstream is never sent a call without its result', async () => {
      upstream.setScript(modelCalling([{ name: 'ask_user', args: {} }]));
      const tools = [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }];
      const id = await conversation();
      const paused = await post({ conversation: id, input: 'go', tools });
      expect(paused.body.output.map((item: any) => item.type)).toEqual(['function_call']);

      upstream.setScript(() => textCompletion('fine'));
      const movedOn = await post({ conversation: id, tools, input: 'never mind' });
      expect(movedOn.status).toBe(200);
      expect(movedOn.body.output[0]).toMatchObject({ type: 'function_call_output', call_id: paused.body.output[0].call_id });
      const messages = upstream.requests.at(-1)!.body.messages as any[];
      const callAt = messages.findIndex((message) => message.tool_calls?.length);
      expect(messages[callAt + 1]).toMatchObject({ role: 'tool', tool_call_id: paused.body.output[0].call_id });
      expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'never mind' });
    });
  });
});
