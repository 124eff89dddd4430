import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { openaiResponses } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * Freeform (`custom`) tools over an OpenAI Responses upstream, which takes
 * them natively: the tool goes up as it came (its grammar constrains the
 * model), the upstream's `custom_tool_call` comes back as the client's,
 * and history goes up as custom calls and outputs. `nativeCustomTools:
 * false` (a compatible server that takes functions only) gets the function
 * every other upstream gets.
 */
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edits files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } };
const execCommand = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };
// Quotes, backslashes, new lines and non-ASCII: all must survive the trip through the engine's JSON arguments.
const patch = '*** Begin Patch\n*** Update File: "a\\b.txt"\n-old\n+new ✓ 🙂\n*** End Patch';

const sse = (events: Record<string, unknown>[]): UpstreamReply => ({ kind: 'sse', pieces: events.map((event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`) });
const body = (status: string, output: unknown[]) => ({ id: 'resp_up', object: 'response', created_at: 0, status, model: 'gpt-5', output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, error: null });
const call = { id: 'ctc_up', type: 'custom_tool_call', status: 'completed', call_id: 'call_patch', name: 'apply_patch', input: patch };

describe('freeform tools over an OpenAI Responses upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let functionsOnly: RunningGateway;
  const post = async (to: RunningGateway, request: Record<string, unknown>) => {
    const response = await fetch(`${to.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiResponses.model, ...request }) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${response.status}: ${text}`);
    if (!request.stream) return { response: JSON.parse(text), events: [] as any[] };
    const { events } = parseSseText(text);
    return { response: events.at(-1)!.response, events };
  };

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, openaiResponses.config(url));
    const config = openaiResponses.config(url) as { providers: { responses: Record<string, unknown> } };
    functionsOnly = await startGateway(url, { ...config, providers: { responses: { ...config.providers.responses, nativeCustomTools: false } } });
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), functionsOnly.close()]);
    await upstream.close();
  });

  it.each([
    { how: 'whole, unstreamed', reply: (): UpstreamReply => ({ kind: 'json', body: body('completed', [call]) }), stream: false },
    {
      how: 'streamed in pieces, ended by input.done',
      stream: true,
      reply: () =>
        sse([
          { type: 'response.created', response: body('in_progress', []) },
          { type: 'response.output_item.added', output_index: 0, item: { ...call, status: 'in_progress', input: '' } },
          { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_up', output_index: 0, delta: patch.slice(0, 20) },
          { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_up', output_index: 0, delta: patch.slice(20) },
          { type: 'response.custom_tool_call_input.done', item_id: 'ctc_up', output_index: 0, input: patch },
          { type: 'response.output_item.done', output_index: 0, item: call },
          { type: 'response.completed', response: body('completed', [call]) },
        ]),
    },
    {
      // A compatible server that streams the input and says no more than the terminal response, without the item.
      how: 'streamed in pieces, with neither input.done nor the item done',
      stream: true,
      reply: () =>
        sse([
          { type: 'response.created', response: body('in_progress', []) },
          { type: 'response.output_item.added', output_index: 0, item: { ...call, status: 'in_progress', input: '' } },
          { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_up', output_index: 0, delta: patch.slice(0, 7) },
          { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_up', output_index: 0, delta: patch.slice(7) },
          { type: 'response.completed', response: body('completed', []) },
        ]),
    },
  ])('the upstream\'s custom_tool_call ($how) reaches the client as its custom_tool_call, input intact', async ({ reply, stream }) => {
    upstream.setScript(reply);
    const { response, events } = await post(gateway, { input: 'patch it', tools: [execCommand, applyPatch], tool_choice: { type: 'custom', name: 'apply_patch' }, stream });
    assertValidResponseWithOpenAIItems(response);
    expect(response.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch, status: 'completed' })]);
    // The client's stream adds the call whole once its input is (client-call-kinds.ts: OpenAI's input events are not in the OpenResponses schema).
    if (stream) expect(events.find((event: any) => event.type === 'response.output_item.done')).toMatchObject({ item: { type: 'custom_tool_call', input: patch } });

    const sent = upstream.requests.at(-1)!.body as any;
    expect(sent.tools).toEqual([expect.objectContaining({ type: 'function', name: 'exec_command' }), applyPatch]);
    expect(sent.tool_choice).toEqual({ type: 'custom', name: 'apply_patch' });
  });

  it('history goes up as the custom call and its custom output, by previous_response_id and resent whole', async () => {
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [call]) }));
    const { response: paused } = await post(gateway, { input: 'patch it', tools: [execCommand, applyPatch] });
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [{ id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'patched', annotations: [] }] }]) }));
    const expected = [
      { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch },
      { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' },
    ];

    const { response: continued } = await post(gateway, { previous_response_id: paused.id, tools: [execCommand, applyPatch], input: [{ type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' }] });
    expect(continued.output_text ?? continued.output[0].content[0].text).toBe('patched');
    expect((upstream.requests.at(-1)!.body as any).input.slice(1)).toEqual(expected);

    // Stateless, as Codex sends it with store: false: the whole history, the call as the client got it.
    await post(gateway, { store: false, tools: [execCommand, applyPatch], input: [{ role: 'user', content: 'patch it' }, { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch }, { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' }] });
    expect((upstream.requests.at(-1)!.body as any).input.slice(1)).toEqual(expected);

    // allowed_tools names it as the custom tool it is.
    await post(gateway, { input: 'x', tools: [execCommand, applyPatch], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch' }, { type: 'function', name: 'exec_command' }] } });
    expect((upstream.requests.at(-1)!.body as any).tool_choice).toEqual({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch' }, { type: 'function', name: 'exec_command' }] });
  });

  it('a custom call the conversation moved on from is closed with a custom_tool_call_output, which the client can send back as it got it', async () => {
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [call]) }));
    const { response: paused } = await post(gateway, { input: 'patch it', tools: [execCommand, applyPatch] });
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [{ id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }]) }));
    // The client goes on without answering the call: the gateway closes it, as the custom call it is.
    const { response: movedOn } = await post(gateway, { previous_response_id: paused.id, tools: [execCommand, applyPatch], input: 'Never mind.' });
    const closing = movedOn.output.find((item: any) => item.call_id === 'call_patch');
    expect(closing).toMatchObject({ type: 'custom_tool_call_output', call_id: 'call_patch', id: expect.stringMatching(/^ctco_/) });
    assertValidResponseWithOpenAIItems(movedOn);
    // Stateless, the whole history resent as the client got it: accepted, the pair intact.
    await post(gateway, { store: false, tools: [execCommand, applyPatch], input: [{ role: 'user', content: 'patch it' }, { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch }, { role: 'user', content: 'Never mind.' }, { type: 'custom_tool_call_output', call_id: 'call_patch', output: closing.output }, { role: 'user', content: 'Go on.' }] });
    expect((upstream.requests.at(-1)!.body as any).input.filter((item: any) => item.type === 'custom_tool_call_output')).toHaveLength(1);
  });

  it('nativeCustomTools: false offers a function with one string, its grammar described, and sends history as function calls', async () => {
    upstream.setScript(() => ({ kind: 'json', body: body('completed', [{ id: 'fc_up', type: 'function_call', status: 'completed', call_id: 'call_patch', name: 'apply_patch', arguments: JSON.stringify({ input: patch }) }]) }));
    const { response: paused } = await post(functionsOnly, { input: 'patch it', tools: [execCommand, applyPatch] });
    expect(paused.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_patch', input: patch })]);
    const offered = (upstream.requests.at(-1)!.body as any).tools.find((tool: any) => tool.name === 'apply_patch');
    expect(offered).toMatchObject({ type: 'function', parameters: { required: ['input'] } });
    expect(offered.description).toContain('lark grammar');

    await post(functionsOnly, { previous_response_id: paused.id, tools: [execCommand, applyPatch], input: [{ type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done!' }] });
    expect((upstream.requests.at(-1)!.body as any).input.slice(1)).toEqual([
      { type: 'function_call', call_id: 'call_patch', name: 'apply_patch', arguments: JSON.stringify({ input: patch }) },
      { type: 'function_call_output', call_id: 'call_patch', output: 'Done!' },
    ]);
  });
});
