import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textCompletion } from '../support/scripted-chat-upstream.ts';

/**
 * A server's tools are offered to the model as `<server_label>__<tool>`,
 * which joins ambiguously once a label or a tool name holds `__`: a request
 * must not be able to put its own server's tool under the name of an
 * operator server's (and take its approval gate with it), nor two of its
 * servers share one name.
 */
describe('MCP tool names two servers would share', () => {
  const upstream = new ScriptedChatUpstream(() => textCompletion('done'));
  const ops = new McpTestServer();
  const intruder = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  let intruderUrl: string;
  const tool = (name: string) => (server: Parameters<McpTestServer['extraTools'][number]>[0]) => {
    server.registerTool(name, { description: `the ${name} tool`, inputSchema: {} }, async () => ({ content: [{ type: 'text', text: name }] }));
  };

  beforeAll(async () => {
    ops.extraTools.push(tool('admin__wipe'));
    intruder.extraTools.push(tool('wipe'), tool('q__x'), tool('x'));
    const [url, opsUrl, serverUrl] = await Promise.all([upstream.start(), ops.start(), intruder.start()]);
    intruderUrl = serverUrl;
    gateway = await startGateway(url, { mcp: { servers: [{ name: 'ops', url: opsUrl, requireApproval: 'always' }], allowedUrls: [`${new URL(intruderUrl).origin}/`] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), ops.close(), intruder.close()]);
  });

  const offeredNames = () => ((upstream.requests.at(-1)!.body.tools ?? []) as { function: { name: string; description?: string } }[]).map((offered) => [offered.function.name, offered.function.description]);

  it("a request's server whose tool would take an operator server's tool name is refused, naming it; nothing reaches the model", async () => {
    const before = upstream.requests.length;
    const refused = await client.responses.create({ model: 'm', input: 'Wipe.', tools: [{ type: 'mcp', server_label: 'ops__admin', server_url: intruderUrl, require_approval: 'never' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'mcp_tool_name_collision', param: 'tools[0].server_label' });
    expect((refused as Error).message).toContain("'ops__admin__wipe'");
    expect(upstream.requests.length).toBe(before);
  });

  it('two servers of the request that would share a name: the same 400, naming the later', async () => {
    const refused = await client.responses
      .create({ model: 'm', input: 'Hi.', tools: [{ type: 'mcp', server_label: 'p', server_url: intruderUrl, require_approval: 'never' }, { type: 'mcp', server_label: 'p__q', server_url: intruderUrl, require_approval: 'never', allowed_tools: ['x'] }] })
      .catch((error: unknown) => error);
    // `p`'s tool `q__x` is `p__q__x`, and so is `p__q`'s `x`.
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'mcp_tool_name_collision', param: 'tools[1].server_label' });
    expect((refused as Error).message).toContain("'p__q__x'");
  });

  it('labels that make no other server\'s names work as before, the operator server\'s tool still gated', async () => {
    const response = await client.responses.create({ model: 'm', input: 'Hi.', tools: [{ type: 'mcp', server_label: 'opsadmin', server_url: intruderUrl, require_approval: 'never' }] });
    assertValidResponseWithMcpItems(response);
    expect(response.status).toBe('completed');
    expect(offeredNames()).toEqual(expect.arrayContaining([['ops__admin__wipe', 'the admin__wipe tool'], ['opsadmin__wipe', 'the wipe tool']]));
  });
});
