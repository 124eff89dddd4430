import { describe, expect, it } from 'vitest';
import { TenantToolPolicy } from '../../src/executors/tenant-tool-policy.ts';
import type { PreparedTools, ToolCall, ToolContext, ToolExecutor, ToolResult } from '../../src/executors/tool-executor.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { calls, MockExecutor, ScriptedProvider, text } from '../support/scripted-provider.ts';
import { fn, harness, types, type Harness } from './loop-harness.ts';

/** The harness's tenant is "t"; these rules are the policy in force after an operator tightened it. */
const tightened = new TenantToolPolicy({ t: { tools: { deny: ['srv', '*__delete'] } } });
const REFUSAL = /^The gateway's tool policy does not allow this tool/;

/** Offers two MCP tools, `delete` needing approval, as a request-named MCP server would (shown as mcp_* items). */
class ApprovalMcpExecutor implements ToolExecutor {
  readonly kind = 'mcp';
  readonly calls: ToolCall[] = [];

  canExecute(): boolean {
    return false;
  }

  async prepare(context: ToolContext): Promise<PreparedTools> {
    if (context.mcpServers.length === 0) return { offered: [], items: [] };
    return {
      offered: [
        { toolName: 'delete', requiresApproval: true },
        { toolName: 'add', requiresApproval: false },
      ].map(({ toolName, requiresApproval }) => ({
        definition: { type: 'function' as const, name: `calc__${toolName}`, parameters: { type: 'object' } },
        executor: this,
        presentation: { kind: 'mcp' as const, serverLabel: 'calc', toolName, requiresApproval },
        target: null,
        serverUrl: 'https://calc.example/mcp',
      })),
      items: [],
    };
  }

  async execute(call: ToolCall): Promise<ToolResult> {
    this.calls.push(call);
    return { output: 'deleted', isError: false };
  }
}

/** Runs one non-streamed request on the engine itself (MCP items are OpenAI's, outside the OpenResponses schema). */
async function respond(h: Harness, body: Record<string, unknown>): Promise<any> {
  const run = await h.engine.createResponse(CreateResponseRequest.parse(body), { tenant: 't', signal: new AbortController().signal });
  let final: any = null;
  for await (const batch of run.events) for (const event of batch) if (event.type === 'response.completed' || event.type === 'response.failed' || event.type === 'response.incomplete') final = JSON.parse(JSON.stringify(event.response));
  assertValidResponseWithOpenAIItems(final);
  return final;
}

const mcpTool = { type: 'mcp', server_label: 'calc', server_url: 'https://calc.example/mcp' };

describe('tenant tool policy in the loop: checked before every execution', () => {
  it('a paused turn resumed under a policy that now denies its server call: the call is refused, never run, and the model sees why', async () => {
    const executor = new MockExecutor(['srv']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 's1', name: 'srv' }, { id: 'k1', name: 'cli' }) : text('Done.')));
    const store = new MemoryResponseStore({ maxEntries: 100, ttlSeconds: 600 });
    const before = harness(provider, [executor], {}, { store });
    const after = harness(provider, [executor], {}, { store, governance: tightened });
    const tools = [fn('srv'), fn('cli')];
    const paused = await before.run({ model: 'm', input: 'x', tools });
    expect(paused.response.status).toBe('requires_action');

    const resumed = await after.run({ model: 'm', tools, previous_response_id: paused.response.id, input: [{ type: 'function_call_output', call_id: 'k1', output: 'client result' }], stream: true });
    expect(executor.calls).toHaveLength(0);
    expect(types(resumed.response)).toEqual(['function_call_output', 'message']);
    expect(JSON.parse(resumed.response.output[0].output).error).toMatch(REFUSAL);
    const seen = provider.requests.at(-1)!.items.flatMap((item: any) => (item.type === 'function_call_output' ? [[item.call_id, item.output]] : []));
    expect(seen).toEqual([
      ['k1', 'client result'],
      ['s1', resumed.response.output[0].output],
    ]);
  });

  it('an MCP call approved after the policy came to deny it is refused on its mcp_call; the server never sees it', async () => {
    const executor = new ApprovalMcpExecutor();
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'd1', name: 'calc__delete', args: '{"id":"r1"}' }) : text('Could not delete.')));
    const store = new MemoryResponseStore({ maxEntries: 100, ttlSeconds: 600 });
    const before = harness(provider, [executor], {}, { store });
    const after = harness(provider, [executor], {}, { store, governance: tightened });
    const paused = await respond(before, { model: 'm', input: 'delete r1', tools: [mcpTool] });
    expect(paused.status).toBe('requires_action');
    const request = paused.output.find((item: any) => item.type === 'mcp_approval_request');

    const approved = await respond(after, { model: 'm', previous_response_id: paused.id, tools: [mcpTool], input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] });
    expect(executor.calls).toHaveLength(0);
    expect(approved.output.map((item: any) => item.type)).toEqual(['mcp_call', 'message']);
    expect(approved.output[0]).toMatchObject({ approval_request_id: request.id, name: 'delete', server_label: 'calc' });
    expect(approved.output[0].error).toMatch(REFUSAL);
    expect(approved.output[0]).not.toHaveProperty('output');
  });

  it('nobody is asked to approve a call the policy denies: it is refused at once and the loop goes on', async () => {
    const executor = new ApprovalMcpExecutor();
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'd1', name: 'calc__delete', args: '{"id":"r1"}' }) : text('Not allowed, then.')));
    const governed = harness(provider, [executor], {}, { governance: tightened });
    const response = await respond(governed, { model: 'm', input: 'delete r1', tools: [mcpTool] });
    expect(response.status).toBe('completed');
    expect(response.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(JSON.parse(response.output[1].output).error).toMatch(REFUSAL);
    expect(executor.calls).toHaveLength(0);
    // The model was never offered it, only what the policy leaves.
    expect(provider.requests[0]!.tools.map((tool: any) => tool.name)).toEqual(['calc__add']);
  });
});
