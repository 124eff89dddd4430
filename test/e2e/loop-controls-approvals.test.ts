import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { flavors, scriptModel, type ModelTurn } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

const flavor = flavors.find((candidate) => candidate.name === 'openai-chat')!;
type Call = NonNullable<ModelTurn['calls']>[number];

/**
 * Loop controls meeting approval gates: a call waiting for approval is one
 * of the response's tool calls (`max_tool_calls`), a terminal tool that ran
 * while the response waited for an approval ends the continuation, and a
 * terminal call in the turn that reaches `max_tool_calls` ends the response
 * as it would below the limit.
 */
describe('loop controls with approval gates', () => {
  const upstream = new ScriptedChatUpstream();
  const ops = new McpTestServer('streamable', { records: true });
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const [url, opsUrl] = await Promise.all([upstream.start(), ops.start()]);
    gateway = await startGateway(url, { ...flavor.config(url), mcp: { servers: [{ name: 'ops', url: opsUrl, requireApproval: 'writes', allowedTools: ['lookup', 'delete_record'] }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    ops.calls.length = 0;
    for (const id of ['r1', 'r2', 'r3']) ops.records.set(id, `record ${id}`);
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), ops.close()]);
  });

  /** The model makes `calls` in its first turn, then answers with the tool results it has seen. */
  const modelCalling = (...calls: Omit<Call, 'id'>[]) =>
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: calls.map((call, index) => ({ id: `call_${index}`, ...call })) } : { text: `Results: ${results.join(' | ')}` }));
  const create = async (body: Record<string, unknown>): Promise<any> => {
    const response = await client.responses.create({ model: flavor.model, ...body } as any);
    assertValidResponseWithMcpItems(response);
    return response;
  };
  const approveAll = (response: any) => response.output.filter((item: any) => item.type === 'mcp_approval_request').map((item: any) => ({ type: 'mcp_approval_response', approval_request_id: item.id, approve: true }));
  const ran = (name: string) => ops.calls.filter((call) => call.name === name).map((call) => (call.args as { id: string }).id);

  it('max_tool_calls counts the calls waiting for approval: those past it are answered without running, never asked about', async () => {
    modelCalling({ name: 'ops__delete_record', args: { id: 'r1' } }, { name: 'ops__lookup', args: { id: 'r2' } });
    const first = await create({ input: 'Delete r1, read r2.', max_tool_calls: 1 });
    expect(first.status).toBe('requires_action');
    expect(first.output.map((item: any) => item.type)).toEqual(['mcp_call', 'mcp_approval_request']);
    expect(first.output[0]).toMatchObject({ name: 'lookup', error: expect.stringContaining('max_tool_calls') });
    expect(ran('lookup')).toEqual([]);

    modelCalling({ name: 'ops__delete_record', args: { id: 'r1' } }, { name: 'ops__delete_record', args: { id: 'r2' } }, { name: 'ops__delete_record', args: { id: 'r3' } });
    const three = await create({ input: 'Delete all three.', max_tool_calls: 2 });
    expect(three.output.filter((item: any) => item.type === 'mcp_approval_request').map((item: any) => JSON.parse(item.arguments).id)).toEqual(['r1', 'r2']);
    expect(three.output.find((item: any) => item.type === 'mcp_call')).toMatchObject({ error: expect.stringContaining('max_tool_calls') });
    const approved = await create({ previous_response_id: three.id, input: approveAll(three), max_tool_calls: 2 });
    expect(approved.status).toBe('completed');
    expect(ran('delete_record')).toEqual(['r1', 'r2']);
  });

  it('a terminal tool that ran while the response waited for an approval ends the continuation, with no model call', async () => {
    modelCalling({ name: 'ops__lookup', args: { id: 'r1' } }, { name: 'ops__delete_record', args: { id: 'r2' } });
    const loop = { terminal_tools: ['ops__lookup'] };
    const paused = await create({ input: 'Read r1, delete r2.', 'loopgate:loop': loop });
    expect(paused.status).toBe('requires_action');
    const calls = upstream.requests.length;
    const continued = await create({ previous_response_id: paused.id, input: approveAll(paused), 'loopgate:loop': loop });
    expect(upstream.requests.length).toBe(calls);
    expect(ran('delete_record')).toEqual(['r2']);
    expect(continued.status).toBe('completed');
    expect(continued['loopgate:loop']).toEqual({ ended_by: { type: 'terminal_tool', name: 'ops__lookup', call_id: paused.output[0].id } });
    expect(continued.output.at(-1)).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'record r1' }] });
  });

  it('a terminal call in the turn that reaches max_tool_calls ends the response completed, not incomplete', async () => {
    modelCalling({ name: 'ops__lookup', args: { id: 'r1' } }, { name: 'ops__lookup', args: { id: 'r2' } });
    const response = await create({ input: 'Read both.', max_tool_calls: 1, 'loopgate:loop': { terminal_tools: ['ops__lookup'] } });
    expect(response.status).toBe('completed');
    expect(response['loopgate:loop']).toMatchObject({ ended_by: { type: 'terminal_tool', name: 'ops__lookup' } });
    expect(ran('lookup')).toEqual(['r1']);
    expect(upstream.requests).toHaveLength(1);
  });
});
