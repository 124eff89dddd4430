import { describe, expect, it } from 'vitest';
import type { Provider, TurnEvent, TurnRequest, TurnStream } from '../../src/providers/provider.ts';
import { harness } from './loop-harness.ts';

/** An upstream that streams without end (a model looping, no max_output_tokens): text, or one call's arguments, forever. */
class EndlessProvider implements Provider {
  readonly name = 'endless';
  closed = 0;
  readonly kind: 'text' | 'arguments' | 'reasoning';
  constructor(kind: 'text' | 'arguments' | 'reasoning') {
    this.kind = kind;
  }
  async startTurn(_request: TurnRequest, _signal: AbortSignal): Promise<TurnStream> {
    const kind = this.kind;
    const provider = this;
    return (async function* (): AsyncGenerator<TurnEvent> {
      try {
        if (kind === 'arguments') yield { type: 'tool_call.start', callId: 'call_1', name: 'lookup' };
        for (;;) {
          if (kind === 'text') yield { type: 'text.delta', delta: 'more words ' };
          else if (kind === 'reasoning') yield { type: 'reasoning.delta', delta: 'thinking on ' };
          else yield { type: 'tool_call.delta', callId: 'call_1', delta: '"a' };
        }
      } finally {
        provider.closed++;
      }
    })();
  }
  async listModels() {
    return [];
  }
  async close() {}
}

/** README: an upstream streaming without end is read up to a bound, then the response fails saying so — it cannot fill the gateway's memory. */
describe('an answer that never ends', () => {
  for (const kind of ['text', 'arguments', 'reasoning'] as const) {
    it(`is cut off at the bound: the response fails upstream_invalid_response and the upstream call is closed (${kind})`, async () => {
      const provider = new EndlessProvider(kind);
      const { response } = await harness(provider, [], { maxAnswerChars: 100_000 }).run({ model: 'm', input: 'go on', stream: true, ...(kind === 'arguments' && { tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] }) });
      expect(response.status).toBe('failed');
      expect(response.error).toMatchObject({ code: 'upstream_invalid_response' });
      expect(response.error.message).toContain('larger than 100000 characters');
      expect(provider.closed).toBe(1);
    });
  }

});
