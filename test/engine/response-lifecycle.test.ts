import { describe, expect, it } from 'vitest';
import type { LoopObserver } from '../../src/engine/loop-observer.ts';
import { ResponseEngine } from '../../src/engine/response-engine.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { ExecutorRegistry } from '../../src/executors/executor-registry.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { calls, MockExecutor, ScriptedProvider, text } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

/** Records every hook call, in order, as `[hook, event]`. */
function recorder(): { observer: LoopObserver; calls: [string, any][]; of(hook: string): any[] } {
  const recorded: [string, any][] = [];
  const hooks = ['turnStarted', 'turnEnded', 'toolCallStarted', 'toolCallEnded', 'responseStarted', 'modelCallFirstOutput', 'modelCallFailed', 'responseEnded', 'responseRefused'] as const;
  const observer = Object.fromEntries(hooks.map((hook) => [hook, (event: unknown) => recorded.push([hook, event])])) as LoopObserver;
  return { observer, calls: recorded, of: (hook) => recorded.filter(([name]) => name === hook).map(([, event]) => event) };
}

const refusal = () => new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Slow down.' });

/** The loop observer's response hooks: one start, then exactly one end or refusal, whichever way a response goes. */
describe('response lifecycle hooks', () => {
  it('a tool loop: started once with who and where, first output per model call, ended once with status, usage and duration', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup' }) : text('done')));
    const seen = recorder();
    const { response } = await harness(provider, [new MockExecutor(['lookup'])]).run({ model: 'm', input: 'x', tools: [fn('lookup')] }, { observers: [seen.observer] });
    expect(seen.calls[0]).toEqual(['responseStarted', { responseId: response.id, model: 'm', provider: 'scripted', upstreamModel: 'm', tenant: 't', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: expect.any(Number) }]);
    expect(seen.of('modelCallFirstOutput')).toEqual([{ turn: 1 }, { turn: 2 }]);
    expect(seen.of('modelCallFailed')).toEqual([]);
    expect(seen.of('responseEnded')).toEqual([
      expect.objectContaining({ responseId: response.id, model: 'm', provider: 'scripted', tenant: 't', status: 'completed', errorCode: null, incompleteReason: null, usage: response.usage, durationMs: expect.any(Number) }),
    ]);
    expect(seen.calls.at(-1)![0]).toBe('responseEnded');
  });

  it('a first model call the upstream refuses: the failure and the refusal (the HTTP error the client got, no end) are told, and the request still rejects', async () => {
    const provider = new ScriptedProvider(() => refusal());
    const seen = recorder();
    await expect(harness(provider).run({ model: 'm', input: 'x' }, { observers: [seen.observer] })).rejects.toMatchObject({ status: 429 });
    expect(seen.calls.map(([hook]) => hook)).toEqual(['responseStarted', 'modelCallFailed', 'responseRefused']);
    expect(seen.of('modelCallFailed')).toEqual([{ turn: 1, provider: 'scripted', code: 'rate_limit_exceeded', status: 429 }]);
    expect(seen.of('responseRefused')[0]).toMatchObject({ responseId: seen.of('responseStarted')[0].responseId, errorCode: 'rate_limit_exceeded', error: { code: 'rate_limit_exceeded', message: 'Slow down.' }, httpStatus: 429, durationMs: expect.any(Number) });
  });

  it('a later model call refused, and an error inside a stream: each told with its turn; the response ends failed once', async () => {
    const refusedLater = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup' }) : refusal()));
    const later = recorder();
    const { response } = await harness(refusedLater, [new MockExecutor(['lookup'])]).run({ model: 'm', input: 'x', tools: [fn('lookup')] }, { observers: [later.observer] });
    expect(response.status).toBe('failed');
    expect(later.of('modelCallFailed')).toEqual([{ turn: 2, provider: 'scripted', code: 'rate_limit_exceeded', status: 429 }]);
    expect(later.of('responseEnded')).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'rate_limit_exceeded' })]);

    const broken = new ScriptedProvider(() => ({ events: [{ type: 'text.delta', delta: 'Par' }, { type: 'error', code: 'server_error', message: 'gone' }] }));
    const midStream = recorder();
    await harness(broken).run({ model: 'm', input: 'x', stream: true }, { observers: [midStream.observer] });
    expect(midStream.of('modelCallFirstOutput')).toEqual([{ turn: 1 }]);
    expect(midStream.of('modelCallFailed')).toEqual([{ turn: 1, provider: 'scripted', code: 'server_error', status: null }]);
    expect(midStream.of('responseEnded')).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'server_error' })]);
  });

  it('a stream its reader drops ends as cancelled; the engine makes one observer per response from its factories', async () => {
    const made: ReturnType<typeof recorder>[] = [];
    const engine = new ResponseEngine({
      router: new ModelRouter(new Map([['scripted', new ScriptedProvider(() => text('hello'))]]), {}, 'scripted'),
      store: new MemoryResponseStore({ maxEntries: 10, ttlSeconds: 60 }),
      executors: new ExecutorRegistry([]),
      limits: { maxTurns: 10, toolTimeoutMs: 5_000, deadlineMs: 30_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action' },
      defaultModel: 'm',
      responseObservers: [
        () => {
          const seen = recorder();
          made.push(seen);
          return seen.observer;
        },
      ],
    });
    const request = CreateResponseRequest.parse({ model: 'm', input: 'x', stream: true });
    const dropped = await engine.createResponse(request, { tenant: 't', signal: new AbortController().signal });
    await dropped.events.next();
    await dropped.events.return(undefined);
    const finished = await engine.createResponse(request, { tenant: 't', signal: new AbortController().signal });
    for await (const _batch of finished.events);
    expect(made).toHaveLength(2);
    expect(made[0]!.of('responseEnded')).toEqual([expect.objectContaining({ status: 'cancelled', incompleteReason: 'cancelled' })]);
    expect(made[1]!.of('responseEnded')).toEqual([expect.objectContaining({ status: 'completed' })]);
  });
});
