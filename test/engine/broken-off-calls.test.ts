import { describe, expect, it } from 'vitest';
import { replayStoredResponse } from '../../src/engine/replay-stored-response.ts';
import type { TurnEvent } from '../../src/providers/provider.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { assertValidEvent, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { MockExecutor, ScriptedProvider, sleep, usage } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

const DONE = ['response.function_call_arguments.done', 'response.output_item.done'];

/** The events that closed the item with this id (arguments done, item done). */
const doneEventsOf = (events: any[], id: string) => events.filter((event) => DONE.includes(event.type) && (event.item_id ?? event.item?.id) === id);

/** A model turn that starts a call and gets as far as its whole arguments, then `end`s. */
const callThen = (name: string, args: string, ...end: TurnEvent[]): TurnEvent[] => [{ type: 'tool_call.start', callId: 'call_1', name }, { type: 'tool_call.delta', callId: 'call_1', delta: args }, ...end];

/**
 * A call whose turn broke off (the upstream failed, the stream ended without
 * a finish, the response was stopped) was never finished by the model, even
 * when its arguments look whole: clients run a call on its
 * `output_item.done` (Codex, the AI SDK), so it must never be done.
 */
describe('calls whose turn broke off', () => {
  it('an upstream error after the arguments: the call is added, never done, and ends incomplete in the failed response and in the store', async () => {
    const gateway = harness(new ScriptedProvider(() => ({ events: callThen('shell', '{"cmd":"rm -rf build"}', { type: 'error', code: 'server_error', message: 'overloaded' }) })));
    const { events, response } = await gateway.run({ model: 'm', input: 'x', tools: [fn('shell')], stream: true });
    expect(response.status).toBe('failed');
    const call = response.output[0];
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"rm -rf build"}', status: 'incomplete' });
    expect(events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.id)).toEqual([call.id]);
    expect(doneEventsOf(events, call.id)).toEqual([]);
    expect((await gateway.store.get('t', response.id))?.response.output[0]).toMatchObject({ id: call.id, status: 'incomplete' });
  });

  it('text (or reasoning) the model was writing when its turn broke off is never done either; what it finished before is', async () => {
    const provider = new ScriptedProvider(() => ({
      events: [
        { type: 'text.delta', delta: 'Finished.' },
        { type: 'tool_call.start', callId: 'call_1', name: 'shell' },
        { type: 'tool_call.delta', callId: 'call_1', delta: '{}' },
        { type: 'message.start' },
        { type: 'text.delta', delta: 'Partial answer' },
        { type: 'error', code: 'server_error', message: 'overloaded' },
      ],
    }));
    const { events, response } = await harness(provider).run({ model: 'm', input: 'x', tools: [fn('shell')], stream: true });
    expect(response.status).toBe('failed');
    const [finished, call, partial] = response.output;
    expect(finished).toMatchObject({ type: 'message', status: 'completed', content: [{ text: 'Finished.' }] });
    expect(doneEventsOf(events, finished.id)).toHaveLength(1);
    expect(partial).toMatchObject({ type: 'message', status: 'incomplete', content: [{ text: 'Partial answer' }] });
    for (const item of [call, partial]) expect(doneEventsOf(events, item.id)).toEqual([]);
    expect(events.filter((event) => event.type === 'response.output_text.done' || event.type === 'response.content_part.done').map((event) => event.item_id)).toEqual([finished.id, finished.id]);

    const thinking = new ScriptedProvider(() => ({ events: [{ type: 'reasoning.delta', delta: 'Thinking about' }, { type: 'error', code: 'server_error', message: 'overloaded' }] }));
    const stopped = await harness(thinking).run({ model: 'm', input: 'x', stream: true });
    expect(stopped.response.output).toEqual([expect.objectContaining({ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Thinking about' }] })]);
    expect(doneEventsOf(stopped.events, stopped.response.output[0].id)).toEqual([]);
  });

  it('a stream that ended without a finish reason: the same', async () => {
    const gateway = harness(new ScriptedProvider(() => ({ events: callThen('shell', '{"cmd":"ls"}', { type: 'usage', usage: usage(5, 5) }) })));
    const { events, response } = await gateway.run({ model: 'm', input: 'x', tools: [fn('shell')], stream: true });
    expect(response).toMatchObject({ status: 'failed', error: { code: 'upstream_stream_truncated' } });
    expect(response.output[0]).toMatchObject({ type: 'function_call', status: 'incomplete' });
    expect(doneEventsOf(events, response.output[0].id)).toEqual([]);
  });

  it('a freeform call (apply_patch) broken off: added incomplete with what the model wrote, never done', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch';
    const provider = new ScriptedProvider(() => ({ events: callThen('apply_patch', JSON.stringify({ input: patch }), { type: 'error', code: 'server_error', message: 'reset' }) }));
    // custom_tool_call is OpenAI's item, not the schema's: its events are checked for order, the rest against the schema too.
    const run = await harness(provider).engine.createResponse(CreateResponseRequest.parse({ model: 'm', input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }], stream: true }), { tenant: 't', signal: new AbortController().signal });
    const events: any[] = [];
    for await (const batch of run.events) for (const event of batch) events.push(JSON.parse(JSON.stringify(event)));
    const response = assertEventStreamInvariants(events, (event: any) => (event.item?.type === 'custom_tool_call' || event.response?.output?.length ? undefined : assertValidEvent(event)));
    assertValidResponseWithOpenAIItems(response);
    expect(response.status).toBe('failed');
    expect(response.output[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: patch, status: 'incomplete' });
    expect(doneEventsOf(events, response.output[0].id)).toEqual([]);
  });

  it('a response stopped while the arguments stream (shut down): the call ends incomplete, never done', async () => {
    const provider = new ScriptedProvider(() => ({ events: callThen('shell', '{"cmd":', { type: 'tool_call.delta', callId: 'call_1', delta: '"ls"}' }, { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_calls' } }), delayMs: 40 }));
    const gateway = harness(provider);
    const running = gateway.run({ model: 'm', input: 'x', tools: [fn('shell')], stream: true });
    await sleep(100);
    gateway.engine.shutDown();
    const { events, response } = await running;
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'server_shutdown' } });
    expect(response.output[0]).toMatchObject({ type: 'function_call', arguments: '{"cmd":', status: 'incomplete' });
    expect(doneEventsOf(events, response.output[0].id)).toEqual([]);
  });

  it("a finish no known reason names, with calls made (a server's `abort`): the turn broke off; nothing runs its calls, a server-side tool's included", async () => {
    const executor = new MockExecutor(['lookup']);
    const provider = new ScriptedProvider(() => ({
      events: [
        { type: 'tool_call.start', callId: 'call_1', name: 'shell' },
        { type: 'tool_call.delta', callId: 'call_1', delta: '{"cmd":"ls"}' },
        { type: 'tool_call.start', callId: 'call_2', name: 'lookup' },
        { type: 'tool_call.delta', callId: 'call_2', delta: '{}' },
        { type: 'finish', finish: { reason: 'other', raw: 'abort' } },
      ],
    }));
    const { events, response } = await harness(provider, [executor]).run({ model: 'm', input: 'x', tools: [fn('shell'), fn('lookup')], stream: true });
    expect(response).toMatchObject({ status: 'failed', error: { code: 'upstream_error', message: expect.stringContaining('"abort"') } });
    expect(executor.calls).toEqual([]);
    expect(provider.requests).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: 'function_call', call_id: 'call_1', status: 'incomplete' });
    expect(doneEventsOf(events, response.output[0].id)).toEqual([]);
  });

  it("a call cut by the model's own token limit is done, incomplete, as OpenAI ends it (the client sees why in the response)", async () => {
    const provider = new ScriptedProvider(() => ({ events: callThen('shell', '{"cmd":"l', { type: 'finish', finish: { reason: 'length', raw: 'length' } }) }));
    const { events, response } = await harness(provider).run({ model: 'm', input: 'x', tools: [fn('shell')], stream: true });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(doneEventsOf(events, response.output[0].id).map((event) => event.type)).toEqual(DONE);
    expect(events.find((event) => event.type === 'response.output_item.done').item.status).toBe('incomplete');
  });

  it('a stored response told again (an Idempotency-Key replay) leaves a broken-off call or text undone too, and a call the token limit cut done', async () => {
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}', status: 'incomplete' };
    const base = { id: 'resp_1', object: 'response', created_at: 1, completed_at: null, model: 'm', output: [call], error: null, usage: null } as any;
    const stopped = replayStoredResponse({ ...base, status: 'incomplete', incomplete_details: { reason: 'server_shutdown' } });
    assertEventStreamInvariants(JSON.parse(JSON.stringify(stopped)), () => {});
    expect(doneEventsOf(stopped, 'fc_1')).toEqual([]);
    const cut = replayStoredResponse({ ...base, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(doneEventsOf(cut, 'fc_1').map((event) => event.type)).toEqual(DONE);
    const message = { type: 'message', id: 'msg_1', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'Partial', annotations: [] }] };
    const stoppedText = replayStoredResponse({ ...base, output: [message], status: 'incomplete', incomplete_details: { reason: 'deadline_exceeded' } });
    assertEventStreamInvariants(JSON.parse(JSON.stringify(stoppedText)), () => {});
    expect(stoppedText.map((event) => event.type)).not.toContain('response.output_item.done');
  });
});
