import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { flavors, type ModelTurn, type ProviderFlavor, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../support/scripted-chat-upstream.ts';
import { joinedToolName } from '../../src/util/joined-tool-name.ts';

const KEY_A = 'sk-policy-team-a-0123';
const KEY_B = 'sk-policy-team-b-0123';
const KEY_C = 'sk-policy-team-c-0123';
const KEY_D = 'sk-policy-team-d-0123';
const KEY_E = 'sk-policy-team-e-0123';
/** A credential in the operator server's URL: configured, so it must never reach the model, though the MCP session does not know it. */
const URL_TOKEN = 'url-token-secret-9876';
const HEADER_SECRET = 'operator-header-secret';

/** The names the model was offered. */
const offeredNames = (flavor: ProviderFlavor, request: RecordedRequest): string[] => flavor.offeredTools(request).map((tool) => tool.name).sort();

const resultsOf = (seen: Seen[]) => seen.filter((entry): entry is Extract<Seen, { kind: 'result' }> => entry.kind === 'result');

/**
 * Per-tenant tool policy and sanitised tool errors, end to end: two API keys
 * (two tenants), real MCP servers, the official SDK, both upstream wire
 * formats, streamed and not. team-a may not run `tools__delete` nor use the
 * server at `other`'s URL; team-b has no policy.
 */
describe.each(flavors)('tool policy over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const tools = new McpTestServer('streamable', { adminTools: true });
  const other = new McpTestServer();
  let otherUrl: string;
  let toolsEndpoint: string;
  let gateway: RunningGateway;
  let model: (seen: Seen[]) => ModelTurn = () => ({ text: 'Hello' });
  const as = (key: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });

  /** One response, streamed or not; every event and the response itself schema-checked. */
  async function respond(key: string, body: Record<string, unknown>, stream: boolean): Promise<any> {
    if (!stream) {
      const response = await as(key).responses.create({ model: flavor.model, ...body } as any);
      assertValidResponse(response);
      return response;
    }
    const events: any[] = [];
    const sse = (await as(key).responses.create({ model: flavor.model, ...body, stream: true } as any)) as unknown as AsyncIterable<any>;
    for await (const event of sse) events.push(event);
    const final = assertEventStreamInvariants(events);
    assertValidResponse(final);
    return final;
  }

  beforeAll(async () => {
    const [upstreamUrl, toolsUrl, url] = await Promise.all([upstream.start(), tools.start(), other.start()]);
    otherUrl = url;
    toolsEndpoint = toolsUrl;
    upstream.setScript((request) => flavor.render(request, model(flavor.seen(request))));
    gateway = await startGateway(upstreamUrl, {
      ...flavor.config(upstreamUrl),
      auth: { apiKeys: [{ key: KEY_A, tenant: 'team-a' }, { key: KEY_B, tenant: 'team-b' }, { key: KEY_C, tenant: 'team-c' }, { key: KEY_D, tenant: 'team-d' }, { key: KEY_E, tenant: 'team-e' }] },
      tenants: { 'team-a': { tools: { deny: ['tools__delete', 'recs__delete'] }, mcpServerUrls: { deny: [new URL(otherUrl).origin] } }, 'team-c': { tools: { allow: [] } }, 'team-d': { tools: { deny: ['*__delete'] } }, 'team-e': { tools: { allow: ['tools__*'] } } },
      mcp: {
        callItems: 'function',
        servers: [
          { name: 'tools', url: `${toolsUrl}?token=${URL_TOKEN}`, headers: { 'x-api-key': HEADER_SECRET } },
          { name: 'other', url: otherUrl, allowedTools: ['add'] },
        ],
        // Loopback is refused for request-named servers unless allowed: the egress policy must not be what refuses `other` below.
        allowedUrls: [`${new URL(otherUrl).origin}/`, `${new URL(toolsUrl).origin}/`],
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), tools.close(), other.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it("a tool the tenant's policy denies is not offered, never runs, and the model sees an error output naming the policy", async () => {
    model = (seen) => {
      const results = resultsOf(seen);
      if (results.length > 0) return { text: `Results: ${results.map((result) => result.content).join(' | ')}` };
      return { calls: [{ id: 'call_del', name: 'tools__delete', args: { id: 'r1' } }, { id: 'call_other', name: 'other__add', args: { a: 1, b: 2 } }, { id: 'call_add', name: 'tools__add', args: { a: 2, b: 3 } }] };
    };
    for (const stream of [false, true]) {
      upstream.requests.length = 0;
      const response = await respond(KEY_A, { input: 'Delete record r1' }, stream);
      expect(response.status).toBe('completed');
      const outputs = new Map(response.output.filter((item: any) => item.type === 'function_call_output').map((item: any) => [item.call_id, item.output]));
      expect(JSON.parse(outputs.get('call_del') as string).error).toMatch(/^The gateway's tool policy does not allow this tool/);
      // A server the tenant may not use offers it nothing: its tools read as tools that do not exist (the refusal above holds whether or not a tool exists, so neither reveals one).
      expect(JSON.parse(outputs.get('call_other') as string).error).toBe("There is no tool named 'other__add'.");
      expect(outputs.get('call_add')).toBe('5');
      // The model saw the same outputs, and was never offered what it may not run.
      const seen = resultsOf(flavor.seen(upstream.requests.at(-1)!));
      expect(seen.find((result) => result.id === 'call_del')?.content).toBe(outputs.get('call_del'));
      expect(offeredNames(flavor, upstream.requests[0]!)).toEqual(['tools__add', 'tools__explode', 'tools__fail', 'tools__secret', 'tools__slow']);
    }
    expect(tools.calls.filter((call) => call.name === 'delete')).toEqual([]);
    expect(other.calls).toEqual([]);
    expect(tools.calls.filter((call) => call.name === 'add')).toHaveLength(2);
  });

  it('a tenant allowed no tool at all (allow: []) is offered none; a call to one gets the policy\'s error, which the model sees before it answers', async () => {
    model = (seen) => {
      const results = resultsOf(seen);
      if (results.length > 0) return { text: `Results: ${results.map((result) => result.content).join(' | ')}` };
      return { calls: [{ id: 'call_add', name: 'tools__add', args: { a: 20, b: 30 } }] };
    };
    for (const stream of [false, true]) {
      upstream.requests.length = 0;
      const response = await respond(KEY_C, { input: 'Add 2 and 3' }, stream);
      expect(response.status).toBe('completed');
      expect(offeredNames(flavor, upstream.requests[0]!)).toEqual([]);
      const output = response.output.find((item: any) => item.type === 'function_call_output');
      expect(JSON.parse(output.output).error).toMatch(/^The gateway's tool policy does not allow this tool/);
      expect(upstream.requests).toHaveLength(2);
      expect(response.output.at(-1).content[0].text).toBe(`Results: ${output.output}`);
    }
    expect(tools.calls.filter((call) => call.name === 'add' && (call.args as any).a === 20)).toHaveLength(0);
  });

  it('another tenant without a policy is offered and runs the same tools', async () => {
    model = (seen) => {
      const results = resultsOf(seen);
      if (results.length > 0) return { text: `Results: ${results.map((result) => result.content).join(' | ')}` };
      return { calls: [{ id: 'call_del', name: 'tools__delete', args: { id: 'r2' } }, { id: 'call_other', name: 'other__add', args: { a: 1, b: 2 } }] };
    };
    for (const stream of [false, true]) {
      upstream.requests.length = 0;
      const response = await respond(KEY_B, { input: 'Delete record r2' }, stream);
      expect(response.output_text ?? response.output.at(-1).content[0].text).toBe('Results: deleted r2 | 3');
      expect(offeredNames(flavor, upstream.requests[0]!)).toContain('tools__delete');
      expect(offeredNames(flavor, upstream.requests[0]!)).toContain('other__add');
    }
    expect(tools.calls.filter((call) => call.name === 'delete')).toEqual([{ name: 'delete', args: { id: 'r2' } }, { name: 'delete', args: { id: 'r2' } }]);
  });

  it('a request naming an MCP server whose URL the tenant may not use is a 400 on tools[i].server_url, before anything connects', async () => {
    const named = [{ type: 'function', name: 'noop', parameters: { type: 'object' }, strict: false }, { type: 'mcp', server_label: 'calc', server_url: otherUrl, require_approval: 'never' }];
    const requestsBefore = other.headers.length;
    for (const stream of [false, true]) {
      const caught = await as(KEY_A)
        .responses.create({ model: flavor.model, input: 'x', tools: named, stream } as any)
        .catch((error: unknown) => error);
      expect(caught).toBeInstanceOf(OpenAI.BadRequestError);
      expect(caught).toMatchObject({ status: 400, param: 'tools[1].server_url', code: 'mcp_server_url_refused' });
      expect((caught as Error).message).toMatch(/not allowed for this tenant by the gateway's tool policy/);
    }
    expect(other.headers.length).toBe(requestsBefore);
    expect(upstream.requests).toHaveLength(0);

    // The same request from team-b lists the server and runs its tool: what refused team-a is its policy.
    model = (seen) => {
      const results = resultsOf(seen);
      return results.length > 0 ? { text: `sum ${results[0]!.content}` } : { calls: [{ id: 'call_calc', name: 'calc__add', args: { a: 20, b: 22 } }] };
    };
    const response: any = await as(KEY_B).responses.create({ model: flavor.model, input: 'x', tools: named } as any);
    assertValidResponseWithOpenAIItems(response);
    expect(response.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(response.output[1]).toMatchObject({ server_label: 'calc', name: 'add', output: '42' });
  });

  it("a server the request names lists only the tools the tenant may run: a denied one is neither offered nor in its mcp_list_tools", async () => {
    model = () => ({ text: 'listed' });
    const named = [{ type: 'mcp', server_label: 'recs', server_url: toolsEndpoint, require_approval: 'never' }];
    const [a, b]: any[] = await Promise.all([KEY_A, KEY_B].map((key) => as(key).responses.create({ model: flavor.model, input: 'x', tools: named } as any)));
    const listed = (response: any) => response.output.find((item: any) => item.type === 'mcp_list_tools').tools.map((tool: any) => tool.name);
    expect(listed(b)).toContain('delete');
    expect(listed(a)).not.toContain('delete');
    expect(listed(a)).toEqual(listed(b).filter((name: string) => name !== 'delete'));
  });

  it("a rule written as *__delete holds for a server the request labels with a long label, though the model's name for the tool is shortened and hashed", async () => {
    const label = 'l'.repeat(60);
    const modelName = joinedToolName(label, 'delete');
    expect(modelName).not.toContain('__delete');
    model = (seen) => (resultsOf(seen).length > 0 ? { text: 'done' } : { calls: [{ id: 'call_del', name: modelName, args: { id: 'r1' } }] });
    const deletes = tools.calls.filter((call) => call.name === 'delete').length;
    const response: any = await as(KEY_D).responses.create({ model: flavor.model, input: 'Delete r1', tools: [{ type: 'mcp', server_label: label, server_url: toolsEndpoint, require_approval: 'never' }] } as any);
    assertValidResponseWithOpenAIItems(response);
    expect(response.output.find((item: any) => item.type === 'mcp_list_tools').tools.map((tool: any) => tool.name)).not.toContain('delete');
    expect(offeredNames(flavor, upstream.requests[0]!)).not.toContain(modelName);
    // Not offered, so a call the model makes anyway reads as one to a tool that does not exist (as a denied server's tools do), and never runs.
    const output = response.output.find((item: any) => item.type === 'function_call_output' && item.call_id === 'call_del');
    expect(JSON.parse(output.output).error).toBe(`There is no tool named '${modelName}'.`);
    expect(tools.calls.filter((call) => call.name === 'delete')).toHaveLength(deletes);
  });

  it("an approval of a tool the tenant's policy denies is refused by the policy, on its mcp_call, not as a server that is not named or not answering", async () => {
    model = () => ({ text: 'after' });
    const input = [
      { type: 'message', role: 'user', content: 'Delete r9' },
      { type: 'mcp_approval_request', id: 'mcpr_denied_1', server_label: 'tools', name: 'delete', arguments: '{"id":"r9"}' },
      { type: 'mcp_approval_response', approval_request_id: 'mcpr_denied_1', approve: true },
    ];
    const response: any = await as(KEY_A).responses.create({ model: flavor.model, store: false, input } as any);
    assertValidResponseWithOpenAIItems(response);
    const call = response.output.find((item: any) => item.type === 'mcp_call');
    expect(call).toMatchObject({ approval_request_id: 'mcpr_denied_1', server_label: 'tools', name: 'delete' });
    expect(call.error).toMatch(/tool policy does not allow this tool/);
    expect(tools.calls.filter((entry) => (entry.args as { id?: string }).id === 'r9')).toEqual([]);

    // A server the request labels long, so the model's name for its tool is hashed: judged by its own name all the same (team-d denies *__delete).
    const label = 'l'.repeat(60);
    const hashed: any = await as(KEY_D).responses.create({
      model: flavor.model,
      store: false,
      input: [input[0], { ...input[1], id: 'mcpr_denied_2', server_label: label }, { ...input[2], approval_request_id: 'mcpr_denied_2' }],
    } as any);
    assertValidResponseWithOpenAIItems(hashed);
    expect(hashed.output.find((item: any) => item.type === 'mcp_call').error).toMatch(/tool policy does not allow this tool/);
  });

  it("an allow rule for the operator's server (tools__*) does not take in a server the request labels 'tools__x': its tools are neither offered nor run", async () => {
    model = (seen) => (resultsOf(seen).length > 0 ? { text: 'done' } : { calls: [{ id: 'call_add', name: 'tools__x__add', args: { a: 4, b: 4 } }] });
    const adds = other.calls.length;
    const response: any = await as(KEY_E).responses.create({ model: flavor.model, input: 'Add', tools: [{ type: 'mcp', server_label: 'tools__x', server_url: otherUrl, require_approval: 'never' }] } as any);
    assertValidResponseWithOpenAIItems(response);
    expect(response.output.find((item: any) => item.type === 'mcp_list_tools').tools).toEqual([]);
    // The operator's own server is what the rule allows.
    expect(offeredNames(flavor, upstream.requests[0]!)).toEqual(['tools__add', 'tools__delete', 'tools__explode', 'tools__fail', 'tools__secret', 'tools__slow']);
    const output = response.output.find((item: any) => item.type === 'function_call_output' && item.call_id === 'call_add');
    expect(JSON.parse(output.output).error).toBe("There is no tool named 'tools__x__add'.");
    expect(other.calls).toHaveLength(adds);
  });

  it("two tenants naming the same MCP server are each given their own session of it: one tenant's calls never carry another's session state", async () => {
    model = (seen) => (resultsOf(seen).length > 0 ? { text: 'done' } : { calls: [{ id: 'call_add', name: 'calc__add', args: { a: 1, b: 1 } }] });
    const named = [{ type: 'mcp', server_label: 'calc', server_url: otherUrl, require_approval: 'never' }];
    other.callMeta.length = 0;
    for (const key of [KEY_B, KEY_D, KEY_B]) {
      const response: any = await as(key).responses.create({ model: flavor.model, input: 'Add', tools: named } as any);
      expect(response.output.find((item: any) => item.type === 'mcp_call')).toMatchObject({ output: '2' });
    }
    const sessions = other.callMeta.map((call) => call.sessionId);
    expect(sessions).toHaveLength(3);
    expect(sessions[0]).toBeDefined();
    expect(sessions[1]).not.toBe(sessions[0]);
    expect(sessions[2]).toBe(sessions[0]);
  });

  it('a failing tool\'s error reaches the model without stack trace, internal addresses or secrets, its message kept', async () => {
    model = (seen) => {
      const results = resultsOf(seen);
      return results.length > 0 ? { text: 'Sorry, the admin API is down.' } : { calls: [{ id: 'call_boom', name: 'tools__explode', args: {} }] };
    };
    for (const stream of [false, true]) {
      upstream.requests.length = 0;
      const response = await respond(KEY_B, { input: 'Read the admin API' }, stream);
      const output: string = response.output.find((item: any) => item.type === 'function_call_output').output;
      const seen = resultsOf(flavor.seen(upstream.requests.at(-1)!)).find((result) => result.id === 'call_boom')!.content;
      for (const text of [output, seen]) {
        expect(text).toMatch(/^AdminError: request to \[internal\] failed with 503 \(called at \[mcp:tools\], key \[redacted\]\)$/);
        for (const leak of ['10.0.3.7', 'at queryAdmin', '/srv/tools', URL_TOKEN, HEADER_SECRET, new URL(gateway.baseURL).hostname]) expect(text).not.toContain(leak);
      }
    }
    expect(tools.calls.filter((call) => call.name === 'explode')).toHaveLength(2);
  });
});
