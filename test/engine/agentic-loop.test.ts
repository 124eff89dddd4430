import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import type { LoopObserver } from '../../src/engine/loop-observer.ts';
import { calls, MockExecutor, ScriptedProvider, sleep, text } from '../support/scripted-provider.ts';
import { fn, harness, types } from './loop-harness.ts';

const userAsks = (content: string) => ({ model: 'm', input: content });

describe('US1: single-turn function tool call (no server-side executors)', () => {
  it('1. with no executors, calls come back as function_call items and the response is completed', async () => {
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'get_weather', args: '{"city":"Oslo"}' }));
    const { response } = await harness(provider).run({ ...userAsks('weather?'), tools: [fn('get_weather')] });
    expect(response.status).toBe('completed');
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' })]);
    expect(provider.requests).toHaveLength(1);
  });

  it('2. tool_choice "none": tools are sent, calls are returned, nothing runs, status completed', async () => {
    const executor = new MockExecutor(['lookup']);
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'lookup' }));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('lookup')], tool_choice: 'none' });
    expect(provider.requests[0]!.tools.map((tool) => tool.name)).toEqual(['lookup']);
    expect(provider.requests[0]!.toolChoice).toBe('none');
    expect(executor.calls).toHaveLength(0);
    expect(response.status).toBe('completed');
    expect(types(response)).toEqual(['function_call']);
  });

  it('3. tool_choice "required" and a model that answers without calls: the answer is respected', async () => {
    const provider = new ScriptedProvider(() => text('No tool needed.'));
    const { response } = await harness(provider, [new MockExecutor(['lookup'])]).run({ ...userAsks('x'), tools: [fn('lookup')], tool_choice: 'required' });
    expect(provider.requests[0]!.toolChoice).toBe('required');
    expect(response.status).toBe('completed');
    expect(response.output[0].content[0].text).toBe('No tool needed.');
  });
});

describe('US2: multi-turn loop with server-side execution', () => {
  it('1. runs the call, feeds the result back with the same call_id, returns the final answer', async () => {
    const executor = new MockExecutor(['lookup'], async () => ({ output: '{"temp":3}', isError: false }));
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup', args: '{"q":"oslo"}' }) : text('It is 3 degrees.')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('weather?'), tools: [fn('lookup')] });
    expect(executor.calls).toEqual([{ callId: 'c1', name: 'lookup', arguments: '{"q":"oslo"}' }]);
    expect(provider.requests[1]!.items.slice(-2)).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'c1', name: 'lookup' }),
      expect.objectContaining({ type: 'function_call_output', call_id: 'c1', output: '{"temp":3}' }),
    ]);
    expect(response.status).toBe('completed');
    expect(types(response)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(response.output[1].call_id).toBe('c1');
  });

  it('2. a three-turn loop streams one continuous sequence: created and in_progress once, one terminal event at the end', async () => {
    const executor = new MockExecutor(['a', 'b']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'ca', name: 'a' }) : turn === 2 ? calls({ id: 'cb', name: 'b' }) : text('done')));
    const { events, response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('a'), fn('b')], stream: true });
    expect(events.filter((event) => event.type === 'response.created')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'response.in_progress')).toHaveLength(1);
    expect(events.filter((event) => ['response.completed', 'response.failed', 'response.incomplete'].includes(event.type))).toHaveLength(1);
    expect(types(response)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output', 'message']);
    expect(events.filter((event) => event.type === 'response.output_item.added').map((event) => event.output_index)).toEqual([0, 1, 2, 3, 4]);
    expect(response.usage).toEqual({ input_tokens: 50, output_tokens: 21, total_tokens: 71, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
  });

  it('3. several calls in one turn run concurrently and go back in call order', async () => {
    const executor = new MockExecutor(['slow'], async (call, signal) => {
      await sleep(200, signal);
      return { output: `out ${call.callId}`, isError: false };
    });
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'slow' }, { id: 'c2', name: 'slow' }, { id: 'c3', name: 'slow' }, { id: 'c4', name: 'slow' }) : text('ok')));
    const started = performance.now();
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('slow')] });
    // One after another they would take 800 ms.
    expect(performance.now() - started).toBeLessThan(400);
    expect(executor.maxRunning).toBe(4);
    expect(provider.requests[1]!.items.filter((item) => item.type === 'function_call_output').map((item: any) => [item.call_id, item.output])).toEqual([
      ['c1', 'out c1'],
      ['c2', 'out c2'],
      ['c3', 'out c3'],
      ['c4', 'out c4'],
    ]);
    expect(response.status).toBe('completed');
  });

  it('4. a tool error goes back to the model as the call output, and the model carries on', async () => {
    const executor = new MockExecutor(['flaky'], async () => ({ output: '{"error":"upstream API down"}', isError: true }));
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'flaky' }) : text('The service is down, sorry.')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('flaky')] });
    expect(provider.requests[1]!.items.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'c1', output: '{"error":"upstream API down"}' });
    expect(response.status).toBe('completed');
  });
});

describe('US3: client-executed tools and requires_action', () => {
  it('1. a call no server-side executor takes pauses the response with requires_action', async () => {
    const executor = new MockExecutor(['server_tool']);
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'client_tool' }));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('client_tool'), fn('server_tool')] });
    expect(response.status).toBe('requires_action');
    expect(types(response)).toEqual(['function_call']);
    expect(executor.calls).toHaveLength(0);
  });

  it('2. the follow-up with function_call_output continues with the whole conversation', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'client_tool', args: '{"a":1}' }) : text('Thanks for the result.')));
    const h = harness(provider, [new MockExecutor(['server_tool'])]);
    const tools = [fn('client_tool'), fn('server_tool')];
    const first = await h.run({ ...userAsks('do it'), tools });
    const second = await h.run({ model: 'm', tools, previous_response_id: first.response.id, input: [{ type: 'function_call_output', call_id: 'c1', output: 'client says 42' }] });
    expect(provider.requests[1]!.items.map((item: any) => [item.type, item.call_id ?? item.role])).toEqual([
      ['message', 'user'],
      ['function_call', 'c1'],
      ['function_call_output', 'c1'],
    ]);
    expect(second.response.status).toBe('completed');
    expect(second.response.output[0].content[0].text).toBe('Thanks for the result.');
  });

  it('3. streaming: the terminal event is response.completed carrying status requires_action', async () => {
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'client_tool' }));
    const { events } = await harness(provider, [new MockExecutor(['server_tool'])]).run({ ...userAsks('x'), tools: [fn('client_tool')], stream: true });
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'requires_action' } });
  });

  it('a configuration reports paused responses as completed, for clients that need OpenAI behaviour', async () => {
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'client_tool' }));
    const { response } = await harness(provider, [new MockExecutor(['server_tool'])], { pausedStatus: 'completed' }).run({ ...userAsks('x'), tools: [fn('client_tool')] });
    expect(response.status).toBe('completed');
  });
});

describe('US4: allowed_tools filtering', () => {
  const tools = [fn('A'), fn('B'), fn('C')];
  const allowA = { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'A' }] };

  it('1. an allowed tool runs', async () => {
    const executor = new MockExecutor(['A', 'B', 'C']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'A' }) : text('ok')));
    await harness(provider, [executor]).run({ ...userAsks('x'), tools, tool_choice: allowA });
    expect(executor.calls.map((call) => call.name)).toEqual(['A']);
    expect(provider.requests[0]!.tools).toHaveLength(3);
  });

  it('2. a tool outside allowed_tools never runs; the model gets an error result', async () => {
    const executor = new MockExecutor(['A', 'B', 'C']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'B' }) : text('ok')));
    await harness(provider, [executor]).run({ ...userAsks('x'), tools, tool_choice: allowA });
    expect(executor.calls).toHaveLength(0);
    expect(JSON.parse((provider.requests[1]!.items.at(-1) as any).output)).toEqual({ error: "The tool 'B' is not among the allowed tools for this request." });
  });

  it('3. without allowed_tools every declared tool is allowed', async () => {
    const executor = new MockExecutor(['A', 'B', 'C']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'B' }, { id: 'c2', name: 'C' }) : text('ok')));
    await harness(provider, [executor]).run({ ...userAsks('x'), tools });
    expect(executor.calls.map((call) => call.name)).toEqual(['B', 'C']);
  });
});

describe('US5: safety limits and termination', () => {
  it('1. max turns 2: a model that keeps calling tools ends incomplete with the results so far', async () => {
    const executor = new MockExecutor(['loop']);
    const provider = new ScriptedProvider((turn) => calls({ id: `c${turn}`, name: 'loop' }));
    const { response } = await harness(provider, [executor], { maxTurns: 2 }).run({ ...userAsks('x'), tools: [fn('loop')] });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_turns' });
    expect(provider.requests).toHaveLength(2);
    expect(types(response)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output']);
  });

  it('2. a streaming loop cancelled mid-turn ends with response.incomplete, status cancelled', async () => {
    const executor = new MockExecutor(['slow'], async (_call, signal) => {
      await sleep(5_000, signal);
      return { output: 'never', isError: false };
    });
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'slow' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const { events, response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('slow')], stream: true }, { signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(600);
    expect(events.at(-1).type).toBe('response.incomplete');
    expect(response.status).toBe('cancelled');
    expect(response.incomplete_details).toEqual({ reason: 'cancelled' });
    expect(executor.aborts).toEqual(['c1']);
  });

  it('3. a provider error in an intermediate turn ends with response.failed', async () => {
    const executor = new MockExecutor(['lookup']);
    const provider = new ScriptedProvider((turn) =>
      turn === 1 ? calls({ id: 'c1', name: 'lookup' }) : new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: 'The upstream failed.' }),
    );
    const { events, response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('lookup')], stream: true });
    expect(events.at(-1).type).toBe('response.failed');
    expect(response.error).toEqual({ code: 'upstream_error', message: 'The upstream failed.', type: 'upstream_error' });
    expect(types(response)).toEqual(['function_call', 'function_call_output']);
  });
});

describe('seed 004 edge cases', () => {
  it('an executor registered but declining every call: the calls are client calls (requires_action)', async () => {
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'mine' }));
    const { response } = await harness(provider, [new MockExecutor([])]).run({ ...userAsks('x'), tools: [fn('mine')] });
    expect(response.status).toBe('requires_action');
  });

  it('a call to a tool not in the request gets an error result the model sees', async () => {
    const executor = new MockExecutor(['real']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'imaginary' }) : text('ok')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('real')] });
    expect(executor.calls).toHaveLength(0);
    expect(JSON.parse(response.output[1].output)).toEqual({ error: "There is no tool named 'imaginary'." });
    expect(response.status).toBe('completed');
  });

  it('all calls of a turn failing does not end the loop', async () => {
    const executor = new MockExecutor(['bad'], async () => {
      throw new Error('boom');
    });
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'bad' }, { id: 'c2', name: 'bad' }) : text('Both failed.')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('bad')] });
    expect(response.status).toBe('completed');
    expect(response.output.filter((item: any) => item.type === 'function_call_output').map((item: any) => JSON.parse(item.output).error)).toEqual([
      "The tool 'bad' failed: boom",
      "The tool 'bad' failed: boom",
    ]);
  });

  it('text and tool calls in the same turn: both are in the output and the loop continues', async () => {
    const executor = new MockExecutor(['lookup']);
    const provider = new ScriptedProvider((turn) =>
      turn === 1 ? { events: [{ type: 'text.delta', delta: 'Let me check.' }, ...calls({ id: 'c1', name: 'lookup' }).events] } : text('Checked.'),
    );
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('lookup')] });
    expect(types(response)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
  });

  it('continuing a requires_action response without any function_call_output goes to the model with the calls closed', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'client_tool' }) : text('Never mind then.')));
    const h = harness(provider, [new MockExecutor(['server_tool'])]);
    const first = await h.run({ ...userAsks('x'), tools: [fn('client_tool')] });
    const second = await h.run({ model: 'm', previous_response_id: first.response.id, input: 'Actually, forget it.', tools: [fn('client_tool')] });
    expect(second.response.status).toBe('completed');
    const sent = provider.requests[1]!.items.map((item: any) => [item.type, item.call_id ?? item.role]);
    expect(sent).toEqual([
      ['message', 'user'],
      ['function_call', 'c1'],
      ['message', 'user'],
      ['function_call_output', 'c1'],
    ]);
    expect(types(second.response)).toEqual(['function_call_output', 'message']);
    expect(JSON.parse(second.response.output[0].output).error).toMatch(/not run/);
  });
});

describe('mixed turns, resumption and policy', () => {
  it('a turn with client and server calls executes nothing and pauses; the continuation runs the server calls concurrently, then the model', async () => {
    const executor = new MockExecutor(['srv'], async (call, signal) => {
      await sleep(250, signal);
      return { output: `server ${call.callId}`, isError: false };
    });
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 's1', name: 'srv' }, { id: 'k1', name: 'cli' }, { id: 's2', name: 'srv' }) : text('All done.')));
    const h = harness(provider, [executor]);
    const tools = [fn('srv'), fn('cli')];
    const first = await h.run({ ...userAsks('x'), tools });
    expect(first.response.status).toBe('requires_action');
    expect(executor.calls).toHaveLength(0);

    const started = performance.now();
    const second = await h.run({ model: 'm', tools, previous_response_id: first.response.id, input: [{ type: 'function_call_output', call_id: 'k1', output: 'client result' }], stream: true });
    // One after another the two server calls would take 500 ms.
    expect(performance.now() - started).toBeLessThan(480);
    expect(executor.maxRunning).toBe(2);
    expect(types(second.response)).toEqual(['function_call_output', 'function_call_output', 'message']);
    const outputs = provider.requests[1]!.items.filter((item) => item.type === 'function_call_output').map((item: any) => [item.call_id, item.output]);
    expect(outputs).toEqual([
      ['k1', 'client result'],
      ['s1', 'server s1'],
      ['s2', 'server s2'],
    ]);
  });

  it('a continuation answering some but not all client calls is a 400 naming a missing call_id', async () => {
    const provider = new ScriptedProvider(() => calls({ id: 'k1', name: 'cli' }, { id: 'k2', name: 'cli' }));
    const h = harness(provider, [new MockExecutor(['srv'])]);
    const first = await h.run({ ...userAsks('x'), tools: [fn('cli')] });
    const error = await h.run({ model: 'm', tools: [fn('cli')], previous_response_id: first.response.id, input: [{ type: 'function_call_output', call_id: 'k1', output: 'one' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'input', code: 'missing_function_call_output' });
    expect(error.message).toContain("'k2'");
  });

  it('parallel_tool_calls: false runs calls one at a time', async () => {
    const executor = new MockExecutor(['t'], async (_call, signal) => {
      await sleep(60, signal);
      return { output: 'ok', isError: false };
    });
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 't' }, { id: 'c2', name: 't' }, { id: 'c3', name: 't' }) : text('done')));
    await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('t')], parallel_tool_calls: false });
    expect(executor.maxRunning).toBe(1);
    expect(executor.calls.map((call) => call.callId)).toEqual(['c1', 'c2', 'c3']);
  });

  it('malformed JSON arguments get an error result and the executor is not called', async () => {
    const executor = new MockExecutor(['t']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 't', args: '{"a": ' }) : text('ok')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('t')] });
    expect(executor.calls).toHaveLength(0);
    expect(JSON.parse(response.output[1].output).error).toMatch(/not a valid JSON object/);
  });

  it('max_tool_calls counts calls, not turns: the calls within it run, those past it are answered without running', async () => {
    const executor = new MockExecutor(['t']);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 't' }, { id: 'c2', name: 't' }) : calls({ id: 'c3', name: 't' }, { id: 'c4', name: 't' })));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('t')], max_tool_calls: 3 });
    expect(executor.calls.map((call) => call.callId)).toEqual(['c1', 'c2', 'c3']);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_tool_calls' });
    // The calls past the limit are answered saying so: none is left without its output for a continuation to trip on.
    const outputs = new Map(response.output.filter((item: any) => item.type === 'function_call_output').map((item: any) => [item.call_id, item.output]));
    expect([...outputs.keys()].sort()).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(outputs.get('c3')).not.toMatch(/not run/);
    expect(outputs.get('c4')).toMatch(/not run: the response reached its limit \(max_tool_calls\)/);
  });

  it('a call past its executor timeout becomes an error result', async () => {
    const executor = new MockExecutor(['slow'], async (_call, signal) => {
      await sleep(5_000, signal);
      return { output: 'late', isError: false };
    }, 100);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'slow' }) : text('Timed out, sorry.')));
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('slow')] });
    expect(JSON.parse(response.output[1].output).error).toBe("The tool 'slow' did not finish within 100 ms.");
    expect(executor.aborts).toEqual(['c1']);
    expect(response.status).toBe('completed');
  });

  it('an executor that ignores its abort signal cannot hold the loop past the timeout', async () => {
    const executor = new MockExecutor(['stubborn'], () => new Promise(() => {}), 100);
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'stubborn' }) : text('ok')));
    const started = performance.now();
    const { response } = await harness(provider, [executor]).run({ ...userAsks('x'), tools: [fn('stubborn')] });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(response.status).toBe('completed');
  });

  it('the whole-response deadline aborts a running tool and ends incomplete', async () => {
    const executor = new MockExecutor(['slow'], async (_call, signal) => {
      await sleep(5_000, signal);
      return { output: 'late', isError: false };
    });
    const provider = new ScriptedProvider(() => calls({ id: 'c1', name: 'slow' }));
    const started = performance.now();
    const { response } = await harness(provider, [executor], { deadlineMs: 200 }).run({ ...userAsks('x'), tools: [fn('slow')] });
    expect(performance.now() - started).toBeLessThan(700);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'deadline_exceeded' });
    expect(executor.aborts).toEqual(['c1']);
  });

  it('cancellation while the model is streaming aborts the provider call', async () => {
    const provider = new ScriptedProvider(() => ({ ...text('slow words'), delayMs: 2_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { response } = await harness(provider).run({ ...userAsks('x'), stream: true }, { signal: controller.signal });
    expect(provider.aborted).toBe(1);
    expect(response.status).toBe('cancelled');
  });

  it('optionally stops after N consecutive failed tool calls (off by default)', async () => {
    const executor = new MockExecutor(['bad'], async () => ({ output: '{"error":"no"}', isError: true }));
    const provider = new ScriptedProvider((turn) => calls({ id: `c${turn}`, name: 'bad' }));
    const limited = await harness(provider, [executor], { maxConsecutiveToolFailures: 2 }).run({ ...userAsks('x'), tools: [fn('bad')] });
    expect(limited.response.status).toBe('failed');
    expect(limited.response.error.code).toBe('tool_failure_limit');
    expect(provider.requests).toHaveLength(2);
    const unlimited = await harness(new ScriptedProvider((turn) => (turn < 4 ? calls({ id: `c${turn}`, name: 'bad' }) : text('gave up'))), [executor]).run({ ...userAsks('x'), tools: [fn('bad')] });
    expect(unlimited.response.status).toBe('completed');
  });

  it('observers see turns and tool calls; one that throws does not break the loop', async () => {
    const seen: string[] = [];
    const recording: LoopObserver = {
      turnStarted: ({ turn }) => seen.push(`turn ${turn} start`),
      turnEnded: ({ turn, toolCalls }) => seen.push(`turn ${turn} end (${toolCalls} calls)`),
      toolCallStarted: ({ callId, executor }) => seen.push(`tool ${callId} start on ${executor}`),
      toolCallEnded: ({ callId, error, durationMs }) => seen.push(`tool ${callId} end ${error === null ? 'ok' : 'error'} ${durationMs >= 0}`),
    };
    const throwing: LoopObserver = {
      turnStarted: () => {
        throw new Error('observer bug');
      },
      toolCallEnded: () => {
        throw new Error('observer bug');
      },
    };
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 't' }) : text('ok')));
    const { response } = await harness(provider, [new MockExecutor(['t'])]).run({ ...userAsks('x'), tools: [fn('t')] }, { observers: [throwing, recording] });
    expect(response.status).toBe('completed');
    expect(seen).toEqual(['turn 1 start', 'turn 1 end (1 calls)', 'tool c1 start on mock', 'tool c1 end ok true', 'turn 2 start', 'turn 2 end (0 calls)']);
  });

  it('a continued loop stores every item, so the next request sees the whole history', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 't' }) : text(`answer ${turn}`)));
    const h = harness(provider, [new MockExecutor(['t'])]);
    const first = await h.run({ ...userAsks('x'), tools: [fn('t')] });
    await h.run({ model: 'm', previous_response_id: first.response.id, input: 'and then?' });
    expect(provider.requests[2]!.items.map((item: any) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message', 'message']);
  });
});
