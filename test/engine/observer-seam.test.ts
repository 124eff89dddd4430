import { describe, expect, it } from 'vitest';
import type { BackgroundRunner } from '../../src/engine/background-runner.ts';
import type { LoopObserver } from '../../src/engine/loop-observer.ts';
import { ResponseEngine } from '../../src/engine/response-engine.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { ExecutorRegistry } from '../../src/executors/executor-registry.ts';
import type { ToolContext } from '../../src/executors/tool-executor.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { calls, MockExecutor, ScriptedProvider, text, usage } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

const HOOKS = [
  'responseStarted',
  'responseEnded',
  'responseRefused',
  'turnStarted',
  'turnEnded',
  'toolCallStarted',
  'toolCallEnded',
  'modelCallFirstOutput',
  'modelCallFailed',
  'modelCallStarted',
  'modelCallEnded',
  'approvalRequested',
] as const;

/** Records every hook, in order; writes a trace context into every carrier it is handed, as the tracer does. */
function recorder(): { observer: LoopObserver; calls: [string, any][]; of(hook: string): any[] } {
  const recorded: [string, any][] = [];
  let spans = 0;
  const observer = Object.fromEntries(
    HOOKS.map((hook) => [
      hook,
      (event: any) => {
        recorded.push([hook, event]);
        if (event.trace) event.trace.traceparent = `00-${'a'.repeat(32)}-${String(++spans).padStart(16, '0')}-01`;
      },
    ]),
  ) as LoopObserver;
  return { observer, calls: recorded, of: (hook) => recorded.filter(([name]) => name === hook).map(([, event]) => event) };
}

/** The one observer seam metrics, the inspector, usage, rate limits and traces all hang on. */
describe('the observer seam', () => {
  it('a tool loop: started once with every field, each model call seen from the loop and from the provider, tool calls with their arguments and output, the trace context carried to the upstream and the tool, ended once', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup', args: '{"q":"oslo"}' }) : text('done')));
    const contexts: ToolContext[] = [];
    const executor = new MockExecutor(['lookup']);
    const execute = executor.execute.bind(executor);
    executor.execute = (call, context, signal) => {
      contexts.push(context);
      return execute(call, context, signal);
    };
    const seen = recorder();
    const { response } = await harness(provider, [executor]).run({ model: 'm', input: 'x', tools: [fn('lookup')], stream: true }, { observers: [seen.observer] });

    expect(seen.calls[0]).toEqual(['responseStarted', { responseId: response.id, model: 'm', provider: 'scripted', upstreamModel: 'm', tenant: 't', stream: true, background: false, conversationId: null, previousResponseId: null, startedAt: expect.any(Number) }]);
    expect(seen.calls.at(-1)![0]).toBe('responseEnded');
    expect(seen.of('responseEnded')).toEqual([expect.objectContaining({ status: 'completed', usage: response.usage, toolCalls: 1 })]);
    expect(seen.of('responseRefused')).toEqual([]);
    // Per model call: announced, its first output, ended with usage and finish.
    const modelCalls = seen.calls.map(([hook]) => hook).filter((hook) => hook.startsWith('modelCall'));
    expect(modelCalls).toEqual(['modelCallStarted', 'modelCallFirstOutput', 'modelCallEnded', 'modelCallStarted', 'modelCallFirstOutput', 'modelCallEnded']);
    expect(seen.of('modelCallEnded').map((event) => [event.turn, event.finish.reason, event.usage.inputTokens, event.error])).toEqual([
      [1, 'tool_calls', 20, null],
      [2, 'stop', 10, null],
    ]);
    // What each carrier was given went with its call.
    expect(provider.requests.map((request) => request.trace?.traceparent)).toEqual(seen.of('modelCallStarted').map((event) => event.trace.traceparent));
    expect(seen.of('toolCallStarted')).toEqual([{ turn: 1, callId: 'c1', itemId: 'c1', name: 'lookup', executor: 'mock', arguments: '{"q":"oslo"}', trace: { traceparent: expect.any(String) } }]);
    expect(contexts.map((context) => context.trace)).toEqual([{ traceparent: seen.of('toolCallStarted')[0].trace.traceparent }]);
    expect(seen.of('toolCallEnded')).toEqual([expect.objectContaining({ callId: 'c1', error: null, output: 'result of lookup' })]);
  });

  it("only an observer that asks for model calls has the provider watched; the loop's own model-call hooks need no watching", async () => {
    const provider = new ScriptedProvider(() => text('hi'));
    const firstOutputs: number[] = [];
    await harness(provider).run({ model: 'm', input: 'x' }, { observers: [{ modelCallFirstOutput: (event) => firstOutputs.push(event.turn) }] });
    expect(firstOutputs).toEqual([1]);
    expect(provider.requests[0]!.trace).toBeUndefined();
  });

  it("the upstream naming its answer is no output: the first output is the model's", async () => {
    const provider = new ScriptedProvider(() => ({ events: [{ type: 'upstream.response', id: 'chatcmpl-1', model: 'm-0613' }, { type: 'usage', usage: usage(3, 0) }, { type: 'finish', finish: { reason: 'stop', raw: 'stop' } }] }));
    const seen = recorder();
    const { response } = await harness(provider).run({ model: 'm', input: 'x' }, { observers: [seen.observer] });
    expect(response.output).toEqual([]);
    expect(seen.of('modelCallFirstOutput')).toEqual([]);
    expect(seen.of('modelCallEnded')).toEqual([expect.objectContaining({ responseId: 'chatcmpl-1', responseModel: 'm-0613', firstEventMs: expect.any(Number) })]);
  });

  it('a background response that cannot be queued is refused, once, with the error the client gets; it never ends', async () => {
    const unavailable = new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The store is unavailable.' });
    const background = { start: async () => Promise.reject(unavailable) } as unknown as BackgroundRunner;
    const seen = recorder();
    const engine = new ResponseEngine({
      router: new ModelRouter(new Map([['scripted', new ScriptedProvider(() => text('hi'))]]), {}, 'scripted'),
      store: new MemoryResponseStore({ maxEntries: 10, ttlSeconds: 60 }),
      executors: new ExecutorRegistry([]),
      limits: { maxTurns: 10, toolTimeoutMs: 5_000, deadlineMs: 30_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action' },
      defaultModel: 'm',
      background,
      responseObservers: [() => seen.observer],
    });
    await expect(engine.createBackground(CreateResponseRequest.parse({ model: 'm', input: 'x', background: true }), { tenant: 't' })).rejects.toBe(unavailable);
    expect(seen.calls.map(([hook]) => hook)).toEqual(['responseStarted', 'responseRefused']);
    expect(seen.of('responseStarted')[0]).toMatchObject({ background: true });
    expect(seen.of('responseRefused')[0]).toMatchObject({ errorCode: 'store_unavailable', httpStatus: 503, error: { code: 'store_unavailable', message: 'The store is unavailable.' } });
  });

  it('a request refused before it starts (a missing input, a rate limit) is no response: no hook hears of it', async () => {
    const seen = recorder();
    const gateway = harness(new ScriptedProvider(() => text('hi')), [], {}, { responseObservers: [() => seen.observer] });
    await expect(gateway.run({ model: 'm', input: [] })).rejects.toMatchObject({ status: 400 });
    const limited = new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'no' });
    const refuse = async () => {
      throw limited;
    };
    await expect(gateway.engine.createResponse(CreateResponseRequest.parse({ model: 'm', input: 'x' }), { tenant: 't', signal: new AbortController().signal, admit: refuse })).rejects.toBe(limited);
    expect(seen.calls).toEqual([]);
  });
});
