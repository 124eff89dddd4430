import { describe, expect, it } from 'vitest';
import type { Provider, TurnRequest, TurnStream } from '../../src/providers/provider.ts';
import { calls, MockExecutor, ScriptedProvider, sleep, text } from '../support/scripted-provider.ts';
import { fn, harness } from './loop-harness.ts';

/** An upstream that never answers: its call only ends when aborted. */
class SilentProvider implements Provider {
  readonly name = 'silent';
  async startTurn(_request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    await sleep(60_000, signal);
    throw new Error('unreachable');
  }
  async listModels() {
    return [];
  }
  async close() {}
}

/** Responses the gateway itself stops: they end with a terminal status, stored, never as an HTTP error. */
describe('stopping responses', () => {
  it('shutDown ends a running response as incomplete (server_shutdown), runs nothing more, and stores it', async () => {
    const executor = new MockExecutor(['slow'], async (_call, signal) => {
      await sleep(5_000, signal);
      return { output: 'late', isError: false };
    });
    const provider = new ScriptedProvider((turn) => (turn === 1 ? calls({ id: 'c1', name: 'slow' }) : text('never asked')));
    const gateway = harness(provider, [executor]);
    const running = gateway.run({ model: 'm', input: 'x', tools: [fn('slow')] });
    while (executor.calls.length === 0) await sleep(5);
    expect(gateway.engine.inFlight).toBe(1);
    gateway.engine.shutDown();
    const { response } = await running;
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'server_shutdown' });
    expect(executor.aborts).toEqual(['c1']);
    expect(provider.requests).toHaveLength(1);
    expect(gateway.engine.inFlight).toBe(0);
    expect((await gateway.store.get('t', response.id))?.response.status).toBe('incomplete');
  });

  it('stopped before the upstream accepted the first call (deadline or shutdown): incomplete, stored, not an error', async () => {
    const byDeadline = harness(new SilentProvider(), [], { deadlineMs: 150 });
    const { response: expired } = await byDeadline.run({ model: 'm', input: 'x' });
    expect(expired.incomplete_details).toEqual({ reason: 'deadline_exceeded' });
    expect((await byDeadline.store.get('t', expired.id))?.response.status).toBe('incomplete');

    const byShutdown = harness(new SilentProvider());
    const running = byShutdown.run({ model: 'm', input: 'x', stream: true });
    await sleep(50);
    byShutdown.engine.shutDown();
    const { response: stopped } = await running;
    expect(stopped.incomplete_details).toEqual({ reason: 'server_shutdown' });
    expect(stopped.output).toEqual([]);
  });

  it('a client that goes away before the first call is accepted: cancelled and stored all the same (the transport has nobody to send it to)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const gateway = harness(new SilentProvider());
    const { response } = await gateway.run({ model: 'm', input: 'x' }, { signal: controller.signal });
    expect(response).toMatchObject({ status: 'cancelled', incomplete_details: { reason: 'cancelled' }, output: [] });
    expect((await gateway.store.get('t', response.id))?.response.status).toBe('cancelled');
  });
});
