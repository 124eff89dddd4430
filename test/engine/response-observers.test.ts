import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import type { LoopObserver, ObservedResponse, ResponseObserverFactory } from '../../src/engine/loop-observer.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { calls, MockExecutor, ScriptedProvider, text, usage } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

/** An observer of every response that writes down what it is told, one line per hook. */
function recorder(): { lines: string[]; observed: ObservedResponse[]; factory: ResponseObserverFactory } {
  const lines: string[] = [];
  const observed: ObservedResponse[] = [];
  const factory: ResponseObserverFactory = (response) => {
    observed.push(response);
    const observer: LoopObserver = {
      responseStarted: (event) => lines.push(`started ${event.responseId === response.id} ${event.tenant} ${event.model} ${event.provider} background=${event.background}`),
      turnStarted: ({ turn }) => lines.push(`turn ${turn}`),
      turnEnded: ({ turn, finish }) => lines.push(`turn ${turn} ${finish}`),
      toolCallStarted: ({ callId }) => lines.push(`tool ${callId}`),
      toolCallEnded: ({ callId, error }) => lines.push(`tool ${callId} ${error === null ? 'ok' : 'failed'}`),
      responseEnded: (event) => lines.push(`ended ${event.status} ${event.error?.code ?? '-'} ${event.usage?.input_tokens ?? '-'}/${event.usage?.output_tokens ?? '-'} ${event.durationMs >= 0}`),
    };
    return observer;
  };
  return { lines, observed, factory };
}

const CARELESS_ERROR = 'lookup failed: upstream http://10.1.2.3:8080/db refused\n    at query (/srv/app/db.js:12:3)';

describe('observers of every response (engine responseObservers)', () => {
  it('see one response from start to end: identity, turns, tool calls, and how it ended with its usage', async () => {
    const { lines, observed, factory } = recorder();
    const executor = new MockExecutor(['lookup'], async () => ({ output: CARELESS_ERROR, isError: true }));
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup' }) : text('Sorry.')));
    const { response } = await harness(provider, [executor], {}, { responseObservers: [factory] }).run({ model: 'm', input: 'x', tools: [fn('lookup')] });
    expect(observed.map(({ id, tenant, background }) => ({ id, tenant, background }))).toEqual([{ id: response.id, tenant: 't', background: false }]);
    expect(lines).toEqual(['started true t m scripted background=false', 'turn 1', 'turn 1 tool_calls', 'tool c1', 'tool c1 failed', 'turn 2', 'turn 2 stop', `ended completed - ${response.usage.input_tokens}/${response.usage.output_tokens} true`]);
    // Errors shown beyond the operator's log are cleaned exactly as the client's output item was.
    const cleaned = observed[0]!.cleanToolError(CARELESS_ERROR);
    expect(cleaned).toBe(response.output[1].output);
    expect(cleaned).not.toContain('10.1.2.3');
    expect(cleaned).not.toContain('/srv/app');
  });

  it('hear of a failed model call as the end of the response, once', async () => {
    const { lines, factory } = recorder();
    const provider = new ScriptedProvider(() => ({ events: [{ type: 'text.delta', delta: 'Hal' }, { type: 'usage', usage: usage(3, 1) }, { type: 'error', code: 'upstream_error', message: 'gone' }] }));
    const { response } = await harness(provider, [], {}, { responseObservers: [factory] }).run({ model: 'm', input: 'x' });
    expect(response.status).toBe('failed');
    expect(lines).toEqual(['started true t m scripted background=false', 'turn 1', 'turn 1 null', 'ended failed upstream_error 3/1 true']);
  });

  it('hear the end of a response whose store write failed a JSON request, though no terminal event went out', async () => {
    const { lines, factory } = recorder();
    const store = new (class extends MemoryResponseStore {
      override async put(): Promise<void> {
        throw new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The store is away.' });
      }
    })({ maxEntries: 10, ttlSeconds: 60 });
    const h = harness(new ScriptedProvider(() => text('Hi')), [], {}, { store, responseObservers: [factory] });
    const run = await h.engine.createResponse(CreateResponseRequest.parse({ model: 'm', input: 'x' }), { tenant: 't', signal: new AbortController().signal });
    await expect((async () => {
      for await (const _batch of run.events);
    })()).rejects.toThrow('The store is away.');
    expect(lines.at(-1)).toMatch(/^ended failed /);
    expect(lines.filter((line) => line.startsWith('ended'))).toHaveLength(1);
  });

  it('are bystanders: a factory or an observer that throws changes nothing for the response or the others', async () => {
    const { lines, factory } = recorder();
    const throwingFactory: ResponseObserverFactory = () => {
      throw new Error('factory bug');
    };
    const throwingObserver: ResponseObserverFactory = () => ({
      responseStarted: () => {
        throw new Error('observer bug');
      },
      responseEnded: () => {
        throw new Error('observer bug');
      },
    });
    const quiet: ResponseObserverFactory = () => null;
    const { response } = await harness(new ScriptedProvider(() => text('Hi')), [], {}, { responseObservers: [throwingFactory, throwingObserver, quiet, factory] }).run({ model: 'm', input: 'x', stream: true });
    expect(response.status).toBe('completed');
    expect(lines).toEqual(['started true t m scripted background=false', 'turn 1', 'turn 1 stop', 'ended completed - 10/5 true']);
  });
});
