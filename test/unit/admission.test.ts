import { describe, expect, it } from 'vitest';
import type { ResponseStartedEvent } from '../../src/engine/loop-observer.ts';
import { Admission, type AdmissionScope } from '../../src/http/rate-limits/admission.ts';
import type { RateLimiter, RateLimits } from '../../src/store/rate-limiter.ts';
import { turnRequest } from '../support/turn-request.ts';

const LIMITS: RateLimits = { requestsPerMinute: null, tokensPerMinute: 100_000, tokensPerDay: null, concurrentResponses: 2 };
const STATE = { requests: null, tokens: null, tokensDay: null, concurrency: null };

/** A limiter that records what it is asked, and the keeper's holds. */
function scope() {
  const charged: number[] = [];
  const released: string[] = [];
  const dropped: string[] = [];
  const settlements: Promise<void>[] = [];
  const limiter: RateLimiter = {
    take: async () => ({ allowed: true, state: STATE }),
    charge: async (_key, _limits, tokens) => void charged.push(tokens),
    release: async (_key, slot) => void released.push(slot),
    renew: async () => {},
  };
  const admissionScope: AdmissionScope = {
    limiter,
    keeper: { hold: () => {}, drop: (_key: string, slot: string) => void dropped.push(slot) } as unknown as AdmissionScope['keeper'],
    storeFailed: () => {},
    storeWorks: () => {},
    track: (settlement) => void settlements.push(settlement),
  };
  return { admissionScope, charged, released, dropped, settlements };
}

const started: ResponseStartedEvent = { responseId: 'resp_1', model: 'm', provider: 'p', upstreamModel: 'm', tenant: 't', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: 0 };

describe('Admission', () => {
  it('a response refused at once frees its slot once and charges nothing: the reservation is given back', async () => {
    const { admissionScope, charged, released, dropped, settlements } = scope();
    const admission = new Admission(admissionScope, 'key', LIMITS, 'slot-1');
    await admission.reserveTokens(turnRequest({ maxOutputTokens: 100 }));
    admission.observer.responseRefused!({ ...started, error: { code: 'upstream_error', message: 'boom' }, errorCode: 'upstream_error', httpStatus: 502, usage: null, durationMs: 1 });
    // The route settles it again when the engine's call rejects: the same settlement.
    await admission.done();
    await Promise.all(settlements);
    expect(settlements).toHaveLength(1);
    expect(released).toEqual(['slot-1']);
    expect(dropped).toEqual(['slot-1']);
    expect(charged).toHaveLength(1);
    expect(charged[0]).toBeLessThan(-100);
  });

  it('a response that ran is charged what it used in place of its reservation, once', async () => {
    const { admissionScope, charged, released, settlements } = scope();
    const admission = new Admission(admissionScope, 'key', LIMITS, 'slot-1');
    await admission.reserveTokens(turnRequest({ maxOutputTokens: 100 }));
    const usage = { input_tokens: 400, output_tokens: 100, total_tokens: 500, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    admission.observer.responseEnded!({ ...started, status: 'completed', errorCode: null, error: null, incompleteReason: null, usage, toolCalls: 0, durationMs: 1 });
    await admission.done();
    await Promise.all(settlements);
    expect(settlements).toHaveLength(1);
    expect(released).toEqual(['slot-1']);
    expect(charged).toHaveLength(1);
  });
});
