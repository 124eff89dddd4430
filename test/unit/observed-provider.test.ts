import { describe, expect, it } from 'vitest';
import { safeObserver, type LoopObserver, type ModelCallEndedEvent, type ModelCallStartedEvent } from '../../src/engine/loop-observer.ts';
import { ObservedProvider } from '../../src/engine/observed-provider.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import type { TurnEvent, TurnStream } from '../../src/providers/provider.ts';
import { calls, ScriptedProvider, text, usage } from '../support/scripted-provider.ts';
import { turnRequest } from '../support/turn-request.ts';

/** Records what the provider reported; writes a trace context into every carrier, as a tracing observer does. */
function recorder() {
  const started: ModelCallStartedEvent[] = [];
  const ended: ModelCallEndedEvent[] = [];
  const observer: LoopObserver = {
    modelCallStarted: (event) => {
      started.push(event);
      event.trace.traceparent = `00-${'a'.repeat(32)}-${String(event.turn).padStart(16, '0')}-01`;
    },
    modelCallEnded: (event) => ended.push(event),
  };
  return { started, ended, observer: safeObserver([observer]) };
}

async function drain(stream: TurnStream, stopAfter = Infinity): Promise<TurnEvent[]> {
  const seen: TurnEvent[] = [];
  for await (const event of stream) {
    seen.push(event);
    if (seen.length >= stopAfter) break;
  }
  return seen;
}

describe('ObservedProvider', () => {
  it('announces each call with a carrier it then sends, and reports usage, finish and output once the stream ends', async () => {
    const answered = text('Oslo is sunny.');
    const inner = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup', args: '{"q":"oslo"}' }) : { events: [{ type: 'upstream.response', id: 'chatcmpl-7', model: 'gpt-test-0613' }, ...answered.events] }));
    const { started, ended, observer } = recorder();
    const provider = new ObservedProvider(inner, observer);
    const signal = new AbortController().signal;

    const first = await drain(await provider.startTurn(turnRequest(), signal));
    expect(first.at(-1)).toEqual({ type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_calls' } });
    await drain(await provider.startTurn(turnRequest({ model: 'other-model', stream: true }), signal));

    expect(started.map((event) => [event.turn, event.provider, event.request.model])).toEqual([[1, 'scripted', 'test-model'], [2, 'scripted', 'other-model']]);
    expect(inner.requests.map((request) => request.trace)).toEqual([{ traceparent: `00-${'a'.repeat(32)}-0000000000000001-01` }, { traceparent: `00-${'a'.repeat(32)}-0000000000000002-01` }]);
    expect(ended).toHaveLength(2);
    expect(ended[0]).toMatchObject({ turn: 1, model: 'test-model', usage: usage(20, 8), finish: { reason: 'tool_calls' }, error: null, output: { text: '', refusal: '', toolCalls: [{ callId: 'c1', name: 'lookup', arguments: '{"q":"oslo"}' }] } });
    expect(ended[0]).toMatchObject({ responseId: null, responseModel: null });
    expect(ended[1]).toMatchObject({ turn: 2, model: 'other-model', responseId: 'chatcmpl-7', responseModel: 'gpt-test-0613', usage: usage(10, 5), finish: { reason: 'stop' }, error: null, output: { text: 'Oslo is sunny.', toolCalls: [] } });
    expect(ended[1]!.firstEventMs).not.toBeNull();
    expect(ended[1]!.durationMs).toBeGreaterThanOrEqual(ended[1]!.firstEventMs!);
  });

  it('sends nothing extra when no observer writes a trace context', async () => {
    const inner = new ScriptedProvider(() => text('hi'));
    const provider = new ObservedProvider(inner, safeObserver([{ modelCallEnded: () => {} }]));
    await drain(await provider.startTurn(turnRequest(), new AbortController().signal));
    expect(inner.requests[0]).not.toHaveProperty('trace');
  });

  it('reports a call the upstream refused at once, and rethrows the refusal', async () => {
    const refusal = new GatewayError({ status: 502, type: 'server_error', code: 'upstream_error', message: 'The upstream failed.' });
    const { ended, observer } = recorder();
    const provider = new ObservedProvider(new ScriptedProvider(() => refusal), observer);
    await expect(provider.startTurn(turnRequest(), new AbortController().signal)).rejects.toBe(refusal);
    expect(ended).toEqual([expect.objectContaining({ turn: 1, error: { code: 'upstream_error', message: 'The upstream failed.' }, usage: null, finish: null, firstEventMs: null })]);
  });

  it('reports an error event mid-stream, and a stream the loop stopped reading', async () => {
    const inner = new ScriptedProvider((turn) =>
      turn === 1 ? { events: [{ type: 'text.delta', delta: 'par' }, { type: 'error', code: 'upstream_overloaded', message: 'Overloaded.' }] } : text('never read to the end'),
    );
    const { ended, observer } = recorder();
    const provider = new ObservedProvider(inner, observer);
    const signal = new AbortController().signal;
    await drain(await provider.startTurn(turnRequest(), signal), 2);
    expect(ended[0]).toMatchObject({ error: { code: 'upstream_overloaded', message: 'Overloaded.' }, output: { text: 'par' } });

    // The loop breaks out early (as after an error event): the call still ends, once.
    await drain(await provider.startTurn(turnRequest(), signal), 1);
    expect(ended).toHaveLength(2);
    expect(ended[1]).toMatchObject({ turn: 2, error: null, finish: null, output: { text: 'never read to the end' } });
  });

  it('says a call was cancelled when the response was', async () => {
    const controller = new AbortController();
    const inner = new ScriptedProvider(() => ({ ...text('slow'), delayMs: 50 }));
    const { ended, observer } = recorder();
    const provider = new ObservedProvider(inner, observer);
    const stream = await provider.startTurn(turnRequest(), controller.signal);
    setTimeout(() => controller.abort(new Error('client gone')), 10);
    await expect(drain(stream)).rejects.toThrow('client gone');
    expect(ended).toEqual([expect.objectContaining({ error: { code: 'cancelled', message: 'The model call was cancelled.' } })]);
  });

  it('an observer that throws breaks nothing', async () => {
    const inner = new ScriptedProvider(() => text('fine'));
    const provider = new ObservedProvider(inner, safeObserver([{ modelCallStarted: () => { throw new Error('observer bug'); }, modelCallEnded: () => { throw new Error('observer bug'); } }]));
    expect(await drain(await provider.startTurn(turnRequest(), new AbortController().signal))).toHaveLength(3);
  });
});
