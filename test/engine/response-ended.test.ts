import { describe, expect, it } from 'vitest';
import type { ResponseEndedEvent } from '../../src/engine/loop-observer.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { calls, MockExecutor, ScriptedProvider, sleep, text } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

/** The seam usage accounting and rate limits hang on: one `responseEnded` per response, however it ends, and `admit` before the first model call. */
describe('responseEnded and admit', () => {
  it('reports a finished response once: usage summed over its turns, the tool calls the gateway ran', async () => {
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'lookup' }, { id: 'c2', name: 'lookup' }) : text('done')));
    const gateway = harness(provider, [new MockExecutor(['lookup'])]);
    const ended: ResponseEndedEvent[] = [];
    const { response } = await gateway.run({ model: 'm', input: 'x', tools: [fn('lookup')] }, { observers: [{ responseEnded: (event) => ended.push(event) }] });
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ responseId: response.id, tenant: 't', model: 'm', provider: 'scripted', status: 'completed', toolCalls: 2, usage: { input_tokens: 30, output_tokens: 13, total_tokens: 43 } });
    expect(ended[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports a response the gateway stopped, and one whose stream nobody read to the end (as cancelled)', async () => {
    const slow = new ScriptedProvider(() => ({ ...text('late'), delayMs: 5_000 }));
    const gateway = harness(slow);
    const ended: ResponseEndedEvent[] = [];
    const observers = [{ responseEnded: (event: ResponseEndedEvent) => ended.push(event) }];
    const running = gateway.run({ model: 'm', input: 'x' }, { observers });
    while (slow.requests.length === 0) await sleep(5);
    gateway.engine.shutDown();
    expect((await running).response.status).toBe('incomplete');
    expect(ended.map((event) => event.status)).toEqual(['incomplete']);

    const quick = harness(new ScriptedProvider(() => text('hi')));
    const run = await quick.engine.createResponse(CreateResponseRequest.parse({ model: 'm', input: 'x' }), { tenant: 't2', signal: new AbortController().signal, observers });
    await run.events.next();
    await run.events.return(undefined);
    expect(ended).toHaveLength(2);
    expect(ended[1]).toMatchObject({ tenant: 't2', status: 'cancelled' });
  });

  it('admit sees the assembled first call (history included) before it is sent, and refuses it with nothing sent upstream', async () => {
    const provider = new ScriptedProvider(() => text('hi'));
    const gateway = harness(provider);
    const first = await gateway.run({ model: 'm', input: 'first' });
    const admitted: TurnRequest[] = [];
    const admit = async (call: TurnRequest) => void admitted.push(structuredClone(call));
    const request = CreateResponseRequest.parse({ model: 'm', input: 'second', previous_response_id: first.response.id, max_output_tokens: 64 });
    const run = await gateway.engine.createResponse(request, { tenant: 't', signal: new AbortController().signal, admit });
    for await (const _batch of run.events);
    expect(admitted).toHaveLength(1);
    expect(admitted[0]!.items.map((item) => item.type)).toEqual(['message', 'message', 'message']);
    expect(admitted[0]!.maxOutputTokens).toBe(64);

    const before = provider.requests.length;
    const refusal = new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'no' });
    const refuse = async () => {
      throw refusal;
    };
    await expect(gateway.engine.createResponse(CreateResponseRequest.parse({ model: 'm', input: 'x' }), { tenant: 't', signal: new AbortController().signal, admit: refuse })).rejects.toBe(refusal);
    expect(provider.requests.length).toBe(before);
  });
});
