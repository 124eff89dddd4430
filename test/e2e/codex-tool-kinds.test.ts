import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { flavors } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

const spawnAgent = { type: 'function', name: 'spawn_agent', description: 'Starts a helper.', strict: false, parameters: { type: 'object', properties: { task: { type: 'string' } } } };
const namespace = { type: 'namespace', name: 'multi_agent_v1', description: 'Agents that work beside you.', tools: [spawnAgent] };
const execCommand = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };

/** The tool kinds Codex CLI sends beside plain functions: namespaces, and hosted tools no upstream here runs. */
describe.each(flavors)('Codex tool kinds over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let strict: RunningGateway;
  const post = async (to: RunningGateway, body: Record<string, unknown>) => {
    const response = await fetch(`${to.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, ...body }) });
    const answer = { status: response.status, headers: response.headers, body: (await response.json()) as any };
    if (answer.status === 200) assertValidResponseWithOpenAIItems(answer.body);
    return answer;
  };
  const offered = () => flavor.offeredTools(upstream.requests.at(-1)!).map((tool) => tool.name);

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url));
    // An upstream that runs web_search itself is configured not to here, so the policy applies to it.
    strict = await startGateway(url, { ...flavor.config(url, { hostedTools: [] }), loop: { hostedTools: 'reject' } });
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), strict.close()]);
    await upstream.close();
  });

  it('a namespace\'s functions are offered under flat names, and calls come back with their namespace', async () => {
    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_ns', name: 'multi_agent_v1__spawn_agent', args: { task: 'lint' } }] }));
    const paused = await post(gateway, { input: 'delegate', tools: [execCommand, namespace], store: false });
    expect(paused.status).toBe(200);
    expect(offered()).toEqual(['exec_command', 'multi_agent_v1__spawn_agent']);
    const call = paused.body.output.find((item: any) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1', call_id: 'call_ns', arguments: '{"task":"lint"}' });
    assertValidResponse(paused.body);

    // Codex resends the whole history: the call as it got it, then its output.
    upstream.setScript((request) => flavor.render(request, { text: 'delegated' }));
    const resumed = await post(gateway, {
      tools: [execCommand, namespace],
      store: false,
      input: [{ role: 'user', content: 'delegate' }, { type: 'function_call', call_id: 'call_ns', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"task":"lint"}' }, { type: 'function_call_output', call_id: 'call_ns', output: 'agent 7 started' }],
    });
    expect(resumed.status).toBe(200);
    expect(flavor.seen(upstream.requests.at(-1)!)).toEqual([
      { kind: 'user', text: 'delegate' },
      { kind: 'call', id: 'call_ns', name: 'multi_agent_v1__spawn_agent', args: { task: 'lint' } },
      { kind: 'result', id: 'call_ns', content: 'agent 7 started' },
    ]);
  });

  it("tool_choice may name a namespace's function as the Agents SDK does (<namespace>.<name>), alone or in allowed_tools", async () => {
    upstream.setScript((request) => flavor.render(request, { text: 'ok' }));
    const named = await post(gateway, { input: 'delegate', tools: [execCommand, namespace], tool_choice: { type: 'function', name: 'multi_agent_v1.spawn_agent' }, store: false });
    expect(named.status).toBe(200);
    // Echoed as the name the model was offered.
    expect(named.body.tool_choice).toEqual({ type: 'function', name: 'multi_agent_v1__spawn_agent' });
    const allowed = await post(gateway, { input: 'delegate', tools: [execCommand, namespace], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'multi_agent_v1.spawn_agent' }] }, store: false });
    expect(allowed.status).toBe(200);
    expect(offered()).toContain('multi_agent_v1__spawn_agent');
    const unknown = await post(gateway, { input: 'delegate', tools: [execCommand, namespace], tool_choice: { type: 'function', name: 'multi_agent_v1.nothing' }, store: false });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: 'tool_choice.name' });
  });

  it('a namespace whose flat names would pass 64 characters, holding a freeform tool: offered under short stable names, calls come back with their namespace', async () => {
    const space = 'n'.repeat(40);
    const longFunction = { type: 'function', name: 'f'.repeat(30), parameters: { type: 'object', properties: {} } };
    const freeform = { type: 'custom', name: 'edit', description: 'Edits.', format: { type: 'text' } };
    const tools = [{ type: 'namespace', name: space, description: 'Long.', tools: [longFunction, freeform] }];
    upstream.setScript((request) => flavor.render(request, { text: 'listing only' }));
    expect((await post(gateway, { input: 'x', tools })).status).toBe(200);
    const [functionName, freeformName] = offered() as [string, string];
    expect(functionName).toMatch(/^n{40}__f{13}_[0-9a-f]{8}$/);
    expect(functionName).toHaveLength(64);
    expect(freeformName).toBe(`${space}__edit`);

    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_long', name: functionName, args: {} }, { id: 'call_edit', name: freeformName, args: { input: 'new text' } }] }));
    const paused = await post(gateway, { input: 'go', tools });
    expect(paused.status).toBe(200);
    expect(paused.body.output.find((item: any) => item.type === 'function_call')).toMatchObject({ call_id: 'call_long', name: longFunction.name, namespace: space });
    expect(paused.body.output.find((item: any) => item.type === 'custom_tool_call')).toMatchObject({ call_id: 'call_edit', name: 'edit', namespace: space, input: 'new text' });

    // Resent as the client got them, the calls reach the model under the names it used.
    upstream.setScript((request) => flavor.render(request, { text: 'done' }));
    const resumed = await post(gateway, {
      tools,
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'call_long', name: longFunction.name, namespace: space, arguments: '{}' },
        { type: 'custom_tool_call', call_id: 'call_edit', name: 'edit', namespace: space, input: 'new text' },
        { type: 'function_call_output', call_id: 'call_long', output: 'ok' },
        { type: 'custom_tool_call_output', call_id: 'call_edit', output: 'edited' },
      ],
    });
    expect(resumed.status).toBe(200);
    const calls = flavor.seen(upstream.requests.at(-1)!).filter((seen) => seen.kind === 'call');
    expect(calls).toEqual([
      { kind: 'call', id: 'call_long', name: functionName, args: {} },
      { kind: 'call', id: 'call_edit', name: freeformName, args: { input: 'new text' } },
    ]);
  });

  it('a custom (freeform) tool: offered as a function with one string, returned as custom_tool_call, its output accepted back', async () => {
    const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edits files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } };
    const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch';
    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_patch', name: 'apply_patch', args: { input: patch } }] }));
    for (const stream of [false, true]) {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'patch it', tools: [execCommand, applyPatch], stream }) });
      expect(response.status).toBe(200);
      const text = await response.text();
      const final = stream ? parseSseText(text).events.at(-1)!.response : JSON.parse(text);
      expect(final.output.filter((item: any) => item.type === 'function_call')).toEqual([]);
      expect(final.output.find((item: any) => item.type === 'custom_tool_call')).toMatchObject({ call_id: 'call_patch', name: 'apply_patch', input: patch, status: 'completed' });
    }
    const sentTool = flavor.offeredTools(upstream.requests.at(-1)!).find((tool) => tool.name === 'apply_patch');
    // OpenAI's Responses API takes the freeform tool as it is, so its grammar constrains the model; the others get it described.
    if (flavor.name === 'openai-responses') expect((upstream.requests.at(-1)!.body.tools as any[]).find((tool) => tool.name === 'apply_patch')).toEqual(applyPatch);
    else expect(JSON.stringify(sentTool)).toContain('lark grammar');

    upstream.setScript((request) => flavor.render(request, { text: 'patched' }));
    const resumed = await post(gateway, {
      tools: [execCommand, applyPatch],
      input: [{ role: 'user', content: 'patch it' }, { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch }, { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' }],
    });
    expect(resumed.status).toBe(200);
    expect(flavor.seen(upstream.requests.at(-1)!)).toEqual([
      { kind: 'user', text: 'patch it' },
      { kind: 'call', id: 'call_patch', name: 'apply_patch', args: { input: patch } },
      { kind: 'result', id: 'call_patch', content: 'Done!' },
    ]);

    // Answered against the stored call (previous_response_id, as Codex continues on its WebSocket), not resent.
    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_patch', name: 'apply_patch', args: { input: patch } }] }));
    const paused = await post(gateway, { input: 'patch it', tools: [execCommand, applyPatch] });
    upstream.setScript((request) => flavor.render(request, { text: 'patched' }));
    const continued = await post(gateway, { previous_response_id: paused.body.id, tools: [execCommand, applyPatch], input: [{ type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' }] });
    expect(continued.status).toBe(200);
    expect(flavor.seen(upstream.requests.at(-1)!).slice(-2)).toEqual([
      { kind: 'call', id: 'call_patch', name: 'apply_patch', args: { input: patch } },
      { kind: 'result', id: 'call_patch', content: 'Done!' },
    ]);
  });

  it('a tool search the client runs: deferred tools wait, the search call comes back as tool_search_call, what it loads is offered from then on', async () => {
    const deploy = { type: 'function', name: 'deploy', description: 'Deploys.', parameters: { type: 'object', properties: {} }, defer_loading: true };
    const tools = [execCommand, { type: 'tool_search', execution: 'client', description: 'Finds more tools.' }, deploy];
    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_search', name: 'tool_search', args: { query: 'deploy' } }] }));
    const searched = await post(gateway, { input: 'ship it', tools });
    expect(searched.status).toBe(200);
    expect(searched.headers.get('x-loopgate-omitted-tools')).toBeNull();
    expect(offered()).toEqual(['exec_command', 'tool_search']);
    const call = searched.body.output.find((item: any) => item.type === 'tool_search_call');
    expect(call).toMatchObject({ call_id: 'call_search', arguments: { query: 'deploy' }, execution: 'client', status: 'completed' });

    upstream.setScript((request) => flavor.render(request, { text: 'deploying' }));
    const loaded = await post(gateway, {
      tools,
      input: [{ role: 'user', content: 'ship it' }, call, { type: 'tool_search_output', call_id: 'call_search', execution: 'client', status: 'completed', tools: [deploy] }],
    });
    expect(loaded.status).toBe(200);
    expect(offered()).toEqual(['exec_command', 'tool_search', 'deploy']);
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'result', id: 'call_search', content: '{"loaded":["deploy"]}' });

    // The same search answered against the stored call, with previous_response_id.
    upstream.setScript((request) => flavor.render(request, { calls: [{ id: 'call_search', name: 'tool_search', args: { query: 'deploy' } }] }));
    const stored = await post(gateway, { input: 'ship it', tools });
    upstream.setScript((request) => flavor.render(request, { text: 'deploying' }));
    const continued = await post(gateway, { previous_response_id: stored.body.id, tools, input: [{ type: 'tool_search_output', call_id: 'call_search', execution: 'client', status: 'completed', tools: [deploy] }] });
    expect(continued.status).toBe(200);
    expect(offered()).toEqual(['exec_command', 'tool_search', 'deploy']);
  });

  it('a deferred tool no search here can load: with only the hosted tool_search (left out) it is offered as it is; with no search at all, a 400 naming it', async () => {
    const deploy = { type: 'function', name: 'deploy', description: 'Deploys.', parameters: { type: 'object', properties: {} }, defer_loading: true };
    upstream.setScript((request) => flavor.render(request, { text: 'ok' }));
    const hostedSearch = await post(gateway, { input: 'ship it', tools: [execCommand, { type: 'tool_search' }, deploy] });
    expect(hostedSearch.status).toBe(200);
    expect(hostedSearch.headers.get('x-loopgate-omitted-tools')).toBe('tool_search');
    expect(offered()).toEqual(['exec_command', 'deploy']);
    const calls = upstream.requests.length;
    const noSearch = await post(gateway, { input: 'ship it', tools: [execCommand, deploy] });
    expect(noSearch.status).toBe(400);
    expect(noSearch.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'tools[1].defer_loading' });
    expect(noSearch.body.error.message).toContain("'deploy'");
    expect(upstream.requests.length).toBe(calls);
  });

  it('hosted tools the upstream does not run are left out of what the model sees and named in x-loopgate-omitted-tools; the strict policy refuses them', async () => {
    upstream.setScript((request) => flavor.render(request, { text: 'no search needed' }));
    const webSearch = { type: 'web_search', external_web_access: false };
    const answered = await post(gateway, { input: 'x', tools: [execCommand, webSearch, { type: 'tool_search' }] });
    expect(answered.status).toBe(200);
    expect(offered()).toEqual(['exec_command']);
    // OpenAI's Responses API runs web_search itself: offered as Codex sent it (README: hosted tools the upstream runs).
    if (flavor.runsWebSearch) expect(upstream.requests.at(-1)!.body.tools).toContainEqual(webSearch);
    expect(answered.headers.get('x-loopgate-omitted-tools')).toBe(flavor.runsWebSearch ? 'tool_search' : 'web_search,tool_search');
    const streamed = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'x', stream: true, tools: [execCommand, { type: 'web_search' }] }) });
    expect(streamed.headers.get('x-loopgate-omitted-tools')).toBe(flavor.runsWebSearch ? null : 'web_search');
    expect(parseSseText(await streamed.text()).events.at(-1)!.type).toBe('response.completed');

    const refused = await post(strict, { input: 'x', tools: [execCommand, { type: 'web_search' }] });
    expect(refused.status).toBe(400);
    assertErrorEnvelope(refused.body);
    expect(refused.body.error).toMatchObject({ code: 'unsupported_tool', param: 'tools[1].type' });
  });
});
