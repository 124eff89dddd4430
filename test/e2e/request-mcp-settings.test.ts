import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiChat, scriptModel } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** Schema-validates a response, except OpenAI's MCP items, which the OpenResponses schema does not define. */
function assertValidExceptMcp(response: any): void {
  assertValidResponse({ ...response, output: response.output.filter((item: any) => !item.type.startsWith('mcp_')) });
}

/**
 * What a request says of an MCP server it names, beyond its URL, read as
 * OpenAI reads it: `authorization`, the read-only filters of `allowed_tools`
 * and `require_approval`, and `tool_choice: {type: "mcp", server_label,
 * name?}` (alone or among `allowed_tools`), which becomes the functions the
 * server's tools are offered as (`records__lookup`): upstream, in the loop's
 * own check and in the response's echo.
 */
describe('request-named MCP servers: authorization, read-only filters, tool_choice', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer('streamable', { records: true });
  let gateway: RunningGateway;
  let client: OpenAI;
  let mcpUrl: string;
  /** The records server as a request names it; its calls run without approval unless a test says otherwise. */
  const server = (extra: Record<string, unknown> = {}) => ({ type: 'mcp' as const, server_label: 'records', server_url: mcpUrl, require_approval: 'never', ...extra });
  const own = { type: 'function' as const, name: 'note', description: 'Takes a note.', parameters: { type: 'object', properties: { text: { type: 'string' } } }, strict: false };
  beforeAll(async () => {
    const [upstreamUrl, url] = await Promise.all([upstream.start(), mcp.start()]);
    mcpUrl = url;
    gateway = await startGateway(upstreamUrl, { ...openaiChat.config(upstreamUrl), mcp: { allowedUrls: [new URL(url).origin + '/'] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  afterEach(() => {
    upstream.requests.length = 0;
    mcp.calls.length = 0;
  });
  /** A response through the SDK, checked against the schema. */
  const create = async (body: Record<string, unknown>): Promise<any> => {
    const response = await client.responses.create(body as any);
    assertValidExceptMcp(response);
    return response;
  };
  const offered = () => upstream.requests[0]!.body.tools.map((tool: any) => tool.function.name).sort();

  it("`authorization` reaches the server as a bearer token (it was dropped, so an OAuth-protected server refused the gateway); a header of the request's own wins", async () => {
    scriptModel(upstream, openaiChat, () => ({ text: 'ok' }));
    mcp.headers.length = 0;
    await create({ model: openaiChat.model, input: 'x', tools: [server({ authorization: 'oauth-token-1' })] });
    expect(mcp.headers.length).toBeGreaterThan(0);
    expect(mcp.headers.every((headers) => headers.authorization === 'Bearer oauth-token-1')).toBe(true);
    mcp.headers.length = 0;
    await create({ model: openaiChat.model, input: 'x', tools: [server({ authorization: 'oauth-token-2', headers: { Authorization: 'Bearer own' } })] });
    expect(mcp.headers.length).toBeGreaterThan(0);
    expect(mcp.headers.every((headers) => headers.authorization === 'Bearer own')).toBe(true);
  });

  it('allowed_tools {read_only: true} offers only the tools the server annotates read-only; with tool_names, both must hold', async () => {
    scriptModel(upstream, openaiChat, () => ({ text: 'ok' }));
    await create({ model: openaiChat.model, input: 'x', tools: [server({ allowed_tools: { read_only: true } })] });
    expect(offered()).toEqual(['records__lookup']);
    upstream.requests.length = 0;
    await create({ model: openaiChat.model, input: 'x', tools: [server({ allowed_tools: { read_only: false, tool_names: ['append_log', 'lookup', 'add'] } })] });
    expect(offered()).toEqual(['records__add', 'records__append_log']);
  });

  it('require_approval {never: {read_only: true}} runs read-only tools at once and holds the others for approval', async () => {
    scriptModel(upstream, openaiChat, (_request, results) =>
      results.length === 0 ? { calls: [{ id: 'call_read', name: 'records__lookup', args: { id: 'r1' } }, { id: 'call_delete', name: 'records__delete_record', args: { id: 'r2' } }] } : { text: 'done' },
    );
    const response = await create({ model: openaiChat.model, input: 'x', tools: [server({ require_approval: { never: { read_only: true } } })] });
    const types = response.output.map((item: any) => item.type);
    expect(types).toContain('mcp_approval_request');
    expect(response.output.find((item: any) => item.type === 'mcp_approval_request')).toMatchObject({ name: 'delete_record' });
    expect(response.output.find((item: any) => item.type === 'mcp_call')).toMatchObject({ name: 'lookup', output: 'first record' });
    expect(mcp.calls.map((call) => call.name)).toEqual(['lookup']);
  });

  it('one tool of a server: the upstream is told to call that function, and the response echoes it by that name', async () => {
    scriptModel(upstream, openaiChat, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_1', name: 'records__lookup', args: { id: 'r1' } }] } : { text: `Found: ${results[0]}` }));
    const response = await create({ model: openaiChat.model, input: 'Read r1.', tools: [server()], tool_choice: { type: 'mcp', server_label: 'records', name: 'lookup' } as any });
    assertValidExceptMcp(response);
    expect(response.output_text).toBe('Found: first record');
    expect(upstream.requests[0]!.body.tool_choice).toEqual({ type: 'function', function: { name: 'records__lookup' } });
    expect(response.tool_choice).toEqual({ type: 'function', name: 'records__lookup' });
  });

  it('a function choice may name a server\'s tool by the function it is offered as; one the request does not offer is a 400 before any model call', async () => {
    scriptModel(upstream, openaiChat, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_1', name: 'records__lookup', args: { id: 'r1' } }] } : { text: `Found: ${results[0]}` }));
    const response = await create({ model: openaiChat.model, input: 'Read r1.', tools: [server()], tool_choice: { type: 'function', name: 'records__lookup' } });
    expect(response.output_text).toBe('Found: first record');
    expect(upstream.requests[0]!.body.tool_choice).toEqual({ type: 'function', function: { name: 'records__lookup' } });
    const calls = upstream.requests.length;
    const refused = await create({ model: openaiChat.model, input: 'x', tools: [server()], tool_choice: { type: 'function', name: 'records__delete' } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, param: 'tool_choice.name', code: 'invalid_value' });
    expect(upstream.requests.length).toBe(calls);
  });

  it("a whole server: the model must call one of its tools, and only its tools", async () => {
    scriptModel(upstream, openaiChat, () => ({ text: 'ok' }));
    const response = await create({ model: openaiChat.model, input: 'x', tools: [server(), own], tool_choice: { type: 'mcp', server_label: 'records' } as any });
    assertValidExceptMcp(response);
    const sent = upstream.requests[0]!.body.tool_choice;
    expect(sent.type).toBe('allowed_tools');
    expect(sent.allowed_tools.mode).toBe('required');
    const names = sent.allowed_tools.tools.map((tool: any) => tool.function.name).sort();
    expect(names).toEqual(['records__add', 'records__append_log', 'records__delete_record', 'records__fail', 'records__lookup', 'records__secret', 'records__slow']);
    expect(response.tool_choice).toMatchObject({ type: 'allowed_tools', mode: 'required' });
  });

  it('among allowed_tools: a call outside them is not run, even to another tool of the same server', async () => {
    scriptModel(upstream, openaiChat, (_request, results) =>
      results.length === 0 ? { calls: [{ id: 'call_ok', name: 'records__lookup', args: { id: 'r2' } }, { id: 'call_no', name: 'records__delete_record', args: { id: 'r2' } }] } : { text: results.join(' | ') },
    );
    const response = await create({
      model: openaiChat.model,
      input: 'x',
      tools: [server(), own],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }, { type: 'mcp', server_label: 'records', name: 'lookup' }] } as any,
    });
    assertValidExceptMcp(response);
    const sent = upstream.requests[0]!.body.tool_choice;
    expect(sent.allowed_tools.tools.map((tool: any) => tool.function.name)).toEqual(['note', 'records__lookup']);
    expect(mcp.calls.map((call) => call.name)).toEqual(['lookup']);
    expect(mcp.records.has('r2')).toBe(true);
    expect(response.output_text).toContain('second record');
    expect(response.tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }, { type: 'function', name: 'records__lookup' }] });
  });

  it('a server the request does not name, or a tool it does not offer, is a 400 naming the field, before any model call', async () => {
    const refused = async (toolChoice: unknown, param: string, mentions: string) => {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiChat.model, input: 'x', tools: [server(), own], tool_choice: toolChoice }) });
      const body = (await response.json()) as any;
      expect(response.status).toBe(400);
      assertErrorEnvelope(body);
      expect(body.error).toMatchObject({ param, code: 'invalid_value' });
      expect(body.error.message).toContain(mentions);
    };
    await refused({ type: 'mcp', server_label: 'elsewhere' }, 'tool_choice.server_label', "'elsewhere'");
    await refused({ type: 'mcp', server_label: 'records', name: 'drop_table' }, 'tool_choice.name', "'drop_table'");
    await refused({ type: 'allowed_tools', tools: [{ type: 'function', name: 'note' }, { type: 'mcp', server_label: 'nowhere' }] }, 'tool_choice.tools[1].server_label', "'nowhere'");
    expect(upstream.requests).toHaveLength(0);
  });
});
